-- Retention clears what removed results said (src/pipeline/retention.ts): it finds them by when
-- they were removed, on this index of the few removed rows, not by reading the jobs table.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "jobs_removed_idx" ON "jobs" ("removed_at") WHERE "removed_at" IS NOT NULL;
