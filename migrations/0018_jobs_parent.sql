-- A video's or a download's song in jobs.parent_job_id (written by new requests), for the jobs
-- made before: the request names it as sourceJobId. Filled while the bot runs, a batch at a time
-- (the online step migrations/online/0008_jobs_parent_backfill.sql); safe to run again.
CREATE OR REPLACE PROCEDURE jobs_parent_backfill(batch integer DEFAULT 5000)
LANGUAGE plpgsql AS $$
DECLARE
  filled integer;
BEGIN
  LOOP
    UPDATE jobs SET parent_job_id = (request ->> 'sourceJobId')::uuid
    WHERE id IN (
      SELECT id FROM jobs
      WHERE kind IN ('video', 'download') AND parent_job_id IS NULL AND request ? 'sourceJobId'
      LIMIT batch
    );
    GET DIAGNOSTICS filled = ROW_COUNT;
    COMMIT;
    EXIT WHEN filled < batch;
  END LOOP;
END
$$;
