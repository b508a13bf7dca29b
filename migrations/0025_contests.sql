CREATE TABLE "contest_entries" (
	"contest_id" uuid NOT NULL,
	"job_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"entered_at" timestamp with time zone NOT NULL,
	CONSTRAINT "contest_entries_contest_id_job_id_pk" PRIMARY KEY("contest_id","job_id")
);
--> statement-breakpoint
CREATE TABLE "contests" (
	"id" uuid PRIMARY KEY NOT NULL,
	"guild_id" text NOT NULL,
	"channel_id" text NOT NULL,
	"theme" text NOT NULL,
	"state" text DEFAULT 'running' NOT NULL,
	"started_by" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"ends_at" timestamp with time zone NOT NULL,
	"max_entries" integer NOT NULL,
	"winner_role_id" text,
	"locale" text,
	"ended_at" timestamp with time zone,
	"results" jsonb,
	"results_message_id" text,
	"posting_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "contest_entries" ADD CONSTRAINT "contest_entries_contest_id_contests_id_fk" FOREIGN KEY ("contest_id") REFERENCES "public"."contests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contest_entries" ADD CONSTRAINT "contest_entries_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "contest_entries_member_idx" ON "contest_entries" USING btree ("contest_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "contests_one_running_unique" ON "contests" USING btree ("guild_id") WHERE "contests"."state" = 'running';--> statement-breakpoint
CREATE INDEX "contests_running_ends_idx" ON "contests" USING btree ("ends_at") WHERE "contests"."state" = 'running';