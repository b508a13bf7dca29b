-- The same for one member's history (/credits-admin history user:).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "credit_ledger_guild_user_id_idx" ON "credit_ledger" ("guild_id", "user_id", "id");
