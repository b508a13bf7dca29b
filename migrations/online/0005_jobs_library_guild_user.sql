-- The same for one member's songs (/library user:).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "jobs_library_guild_user_idx" ON "jobs" ("guild_id", "user_id", "created_at", "id") WHERE "state" = 'succeeded' AND "kind" IN ('song', 'persona_song');
