-- /library pages a guild's finished songs newest first and counts them for its footer: both read
-- this index alone (the count index-only), however many other jobs the guild has made.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "jobs_library_guild_idx" ON "jobs" ("guild_id", "created_at", "id") WHERE "state" = 'succeeded' AND "kind" IN ('song', 'persona_song');
