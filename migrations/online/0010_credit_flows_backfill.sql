-- The dashboard's daily flows from before migration 0026, counted guild by guild while the bot
-- runs (credit_flows_backfill, in that migration). Until this step is recorded, the chart counts
-- from the ledger.
CALL credit_flows_backfill();
