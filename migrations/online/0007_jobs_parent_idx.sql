-- A second request for a song's video or file finds the job that made it (jobMakingFile).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "jobs_parent_idx" ON "jobs" ("parent_job_id", "kind") WHERE "parent_job_id" IS NOT NULL;
