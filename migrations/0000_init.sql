CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"guild_id" text NOT NULL,
	"actor_id" text NOT NULL,
	"action" text NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "credit_ledger" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"guild_id" text NOT NULL,
	"key" text NOT NULL,
	"kind" text NOT NULL,
	"amount" integer NOT NULL,
	"balance_after" integer NOT NULL,
	"job_id" uuid,
	"user_id" text,
	"actor_id" text,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "guild_role_limits" (
	"guild_id" text NOT NULL,
	"role_id" text NOT NULL,
	"daily_cap" integer NOT NULL,
	CONSTRAINT "guild_role_limits_guild_id_role_id_pk" PRIMARY KEY("guild_id","role_id")
);
--> statement-breakpoint
CREATE TABLE "guilds" (
	"id" text PRIMARY KEY NOT NULL,
	"balance" integer DEFAULT 0 NOT NULL,
	"frozen" boolean DEFAULT false NOT NULL,
	"monthly_allowance" integer DEFAULT 0 NOT NULL,
	"allowance_period" text,
	"user_daily_cap" integer,
	"allowed_channel_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"required_role_id" text,
	"moderator_role_id" text,
	"default_model" text,
	"cooldown_seconds" integer DEFAULT 0 NOT NULL,
	"visibility" text DEFAULT 'public' NOT NULL,
	"alert_channel_id" text,
	"alert_below" integer,
	"alert_sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "guilds_balance_non_negative" CHECK ("guilds"."balance" >= 0)
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"guild_id" text NOT NULL,
	"channel_id" text NOT NULL,
	"user_id" text NOT NULL,
	"kind" text NOT NULL,
	"request" jsonb NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"cost" integer NOT NULL,
	"upstream_task_id" text,
	"webhook_secret" text NOT NULL,
	"application_id" text,
	"interaction_token" text,
	"interaction_at" timestamp with time zone,
	"result" jsonb,
	"error" jsonb,
	"submit_attempts" integer DEFAULT 0 NOT NULL,
	"submit_uncertain_at" timestamp with time zone,
	"delivery_state" text DEFAULT 'pending' NOT NULL,
	"message_id" text,
	"parent_job_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"submitted_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"delivered_at" timestamp with time zone,
	"deadline_at" timestamp with time zone,
	CONSTRAINT "jobs_cost_non_negative" CHECK ("jobs"."cost" >= 0)
);
--> statement-breakpoint
CREATE TABLE "voice_personas" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"guild_id" text NOT NULL,
	"owner_id" text NOT NULL,
	"name" text NOT NULL,
	"persona_id" text NOT NULL,
	"job_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_key" text NOT NULL,
	"job_id" uuid NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_guild_id_guilds_id_fk" FOREIGN KEY ("guild_id") REFERENCES "public"."guilds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "guild_role_limits" ADD CONSTRAINT "guild_role_limits_guild_id_guilds_id_fk" FOREIGN KEY ("guild_id") REFERENCES "public"."guilds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_guild_id_guilds_id_fk" FOREIGN KEY ("guild_id") REFERENCES "public"."guilds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_personas" ADD CONSTRAINT "voice_personas_guild_id_guilds_id_fk" FOREIGN KEY ("guild_id") REFERENCES "public"."guilds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_personas" ADD CONSTRAINT "voice_personas_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_guild_created_idx" ON "audit_log" USING btree ("guild_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "credit_ledger_key_unique" ON "credit_ledger" USING btree ("key");--> statement-breakpoint
CREATE INDEX "credit_ledger_guild_created_idx" ON "credit_ledger" USING btree ("guild_id","created_at");--> statement-breakpoint
CREATE INDEX "credit_ledger_guild_user_created_idx" ON "credit_ledger" USING btree ("guild_id","user_id","created_at");--> statement-breakpoint
CREATE INDEX "credit_ledger_job_idx" ON "credit_ledger" USING btree ("job_id");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_upstream_task_unique" ON "jobs" USING btree ("upstream_task_id");--> statement-breakpoint
CREATE INDEX "jobs_guild_created_idx" ON "jobs" USING btree ("guild_id","created_at");--> statement-breakpoint
CREATE INDEX "jobs_guild_user_created_idx" ON "jobs" USING btree ("guild_id","user_id","created_at");--> statement-breakpoint
CREATE INDEX "jobs_open_idx" ON "jobs" USING btree ("state","created_at") WHERE "jobs"."state" in ('queued', 'submitting', 'submitted');--> statement-breakpoint
CREATE INDEX "jobs_undelivered_idx" ON "jobs" USING btree ("completed_at") WHERE "jobs"."delivery_state" = 'pending' and "jobs"."state" in ('succeeded', 'failed', 'timed_out');--> statement-breakpoint
CREATE UNIQUE INDEX "voice_personas_guild_name_live_unique" ON "voice_personas" USING btree ("guild_id","name") WHERE "voice_personas"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_events_key_unique" ON "webhook_events" USING btree ("event_key");--> statement-breakpoint
CREATE INDEX "webhook_events_job_idx" ON "webhook_events" USING btree ("job_id");