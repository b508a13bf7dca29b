CREATE TABLE "song_likes" (
	"job_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"guild_id" text NOT NULL,
	"liked_at" timestamp with time zone,
	"last_press" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "song_likes_job_id_user_id_pk" PRIMARY KEY("job_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "reroll_of" uuid;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "like_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "song_likes" ADD CONSTRAINT "song_likes_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;