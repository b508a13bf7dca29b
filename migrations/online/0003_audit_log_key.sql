-- A moderator change's idempotency key, looked up before each change: found by index, not by
-- reading the guild's whole audit log.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "audit_log_guild_action_key_idx" ON "audit_log" ("guild_id", "action", (("details" ->> 'key')));
