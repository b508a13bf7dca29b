CREATE TABLE "guild_welcomes" (
	"guild_id" text PRIMARY KEY NOT NULL,
	"channel_id" text,
	"welcomed_at" timestamp with time zone DEFAULT now() NOT NULL
);
