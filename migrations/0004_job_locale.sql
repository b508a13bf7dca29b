ALTER TABLE "jobs" ADD COLUMN "locale" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "guild_locale" text;