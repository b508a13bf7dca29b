CREATE TABLE "entitlements" (
	"id" text PRIMARY KEY NOT NULL,
	"sku_id" text NOT NULL,
	"kind" text NOT NULL,
	"type" integer NOT NULL,
	"user_id" text,
	"credits" integer NOT NULL,
	"guild_id" text,
	"default_guild_id" text,
	"starts_at" timestamp with time zone,
	"ends_at" timestamp with time zone,
	"claimed_at" timestamp with time zone,
	"consumed_at" timestamp with time zone,
	"deleted_at" timestamp with time zone,
	"reversed_credits" integer DEFAULT 0 NOT NULL,
	"unrecovered_credits" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "premium_offers" (
	"user_id" text PRIMARY KEY NOT NULL,
	"guild_id" text NOT NULL,
	"shown_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "guilds" ADD COLUMN "subscription_allowance" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "entitlements_unclaimed_user_idx" ON "entitlements" USING btree ("user_id") WHERE "entitlements"."kind" = 'pack' and "entitlements"."claimed_at" is null and "entitlements"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "entitlements_unconsumed_idx" ON "entitlements" USING btree ("claimed_at") WHERE "entitlements"."kind" = 'pack' and "entitlements"."claimed_at" is not null and "entitlements"."consumed_at" is null and "entitlements"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "entitlements_guild_idx" ON "entitlements" USING btree ("guild_id","created_at");