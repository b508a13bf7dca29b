-- The library search index below: trigram operators (pg_trgm) and a plain column in a GIN index (btree_gin).
-- Both are contrib extensions, shipped with the embedded Postgres and with Debian's and the official images' Postgres.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "remix_of" uuid;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_remix_of_jobs_id_fk" FOREIGN KEY ("remix_of") REFERENCES "public"."jobs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "jobs_library_search_idx" ON "jobs" USING gin ("guild_id",(coalesce("request" ->> 'title', '') || ' ' || coalesce("request" ->> 'prompt', '') || ' ' || coalesce("request" ->> 'lyrics', '') || ' ' || coalesce("result" -> 'clips' -> 0 ->> 'title', '') || ' ' || coalesce("result" -> 'clips' -> 0 ->> 'lyrics', '')) gin_trgm_ops) WHERE "jobs"."state" = 'succeeded' and "jobs"."kind" in ('song', 'persona_song');--> statement-breakpoint
CREATE INDEX "jobs_remix_of_idx" ON "jobs" USING btree ("remix_of") WHERE "jobs"."remix_of" is not null;