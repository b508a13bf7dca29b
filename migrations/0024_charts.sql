CREATE TABLE "chart_counts" (
	"guild_id" text NOT NULL,
	"metric" text NOT NULL,
	"period" text NOT NULL,
	"period_start" date NOT NULL,
	"job_id" uuid NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "chart_counts_guild_id_metric_period_period_start_job_id_pk" PRIMARY KEY("guild_id","metric","period","period_start","job_id")
);
--> statement-breakpoint
CREATE TABLE "chart_post_settings" (
	"guild_id" text PRIMARY KEY NOT NULL,
	"channel_id" text NOT NULL,
	"weekday" integer NOT NULL,
	"hour" integer NOT NULL,
	"time_zone" text NOT NULL,
	"locale" text,
	"next_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chart_posts" (
	"guild_id" text NOT NULL,
	"week" text NOT NULL,
	"channel_id" text NOT NULL,
	"message_id" text,
	"claimed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chart_posts_guild_id_week_pk" PRIMARY KEY("guild_id","week")
);
--> statement-breakpoint
CREATE TABLE "song_plays" (
	"play_key" text PRIMARY KEY NOT NULL,
	"job_id" uuid NOT NULL,
	"guild_id" text NOT NULL,
	"heard_ms" integer NOT NULL,
	"played_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "song_plays" ADD CONSTRAINT "song_plays_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "chart_counts_top_idx" ON "chart_counts" USING btree ("guild_id","metric","period","period_start","count" DESC NULLS LAST,"job_id");--> statement-breakpoint
CREATE INDEX "chart_post_settings_next_idx" ON "chart_post_settings" USING btree ("next_at");