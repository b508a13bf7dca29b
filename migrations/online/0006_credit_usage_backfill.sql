-- The usage summaries' history from before migration 0011, counted guild by guild while the bot
-- runs (credit_usage_backfill, in that migration). Until this step is recorded, usage is counted
-- from the ledger.
CALL credit_usage_backfill();
