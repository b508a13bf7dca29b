ALTER TABLE "guilds" ADD COLUMN "allowance_floor" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- A month applied before this column: taken as given the largest allowance the guild has now.
UPDATE "guilds" SET "allowance_floor" = greatest("monthly_allowance", "subscription_allowance") WHERE "allowance_period" IS NOT NULL;
