-- The videos and downloads made before migration 0018 name their song too (jobs_parent_backfill).
CALL jobs_parent_backfill();
