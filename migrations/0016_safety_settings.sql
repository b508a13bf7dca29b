ALTER TABLE "guilds" ADD COLUMN "review_channel_id" text;--> statement-breakpoint
ALTER TABLE "guilds" ADD COLUMN "use_automod" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "guilds" ADD COLUMN "explicit_in_age_restricted_only" boolean DEFAULT true NOT NULL;