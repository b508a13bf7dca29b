-- /credits-admin history pages a guild's ledger newest first by id (keyset paging): each page
-- reads its rows from this index, however long the guild's history.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "credit_ledger_guild_id_idx" ON "credit_ledger" ("guild_id", "id");
