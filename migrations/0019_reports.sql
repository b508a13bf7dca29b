CREATE TABLE "result_reports" (
	"job_id" uuid NOT NULL,
	"reporter_id" text NOT NULL,
	"guild_id" text NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "result_reports_job_id_reporter_id_pk" PRIMARY KEY("job_id","reporter_id")
);
--> statement-breakpoint
CREATE TABLE "result_reviews" (
	"job_id" uuid PRIMARY KEY NOT NULL,
	"guild_id" text NOT NULL,
	"channel_id" text,
	"message_id" text,
	"outcome" text,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	"reported_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "removed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "removal" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "removed_by" text;--> statement-breakpoint
ALTER TABLE "result_reports" ADD CONSTRAINT "result_reports_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "result_reviews" ADD CONSTRAINT "result_reviews_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "result_reports_reason_kept_idx" ON "result_reports" USING btree ("created_at") WHERE "result_reports"."reason" is not null;--> statement-breakpoint
CREATE INDEX "result_reviews_open_idx" ON "result_reviews" USING btree ("guild_id","reported_at") WHERE "result_reviews"."outcome" is null;