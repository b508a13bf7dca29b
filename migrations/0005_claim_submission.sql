-- Claiming a queued job for submission under the in-flight cap of its task type (issue 12).
-- One call, so the advisory lock that makes "count, then move" one step across every worker is
-- held for the time Postgres takes, not for the round trips of a busy worker process (four of
-- them used to be made under it, and every claim of the type waited behind them).
-- Each statement of a plpgsql function takes its own snapshot (read committed): the count,
-- made once the lock is held, sees every claim committed before it. The count stops at the
-- cap, so it costs no more than the cap, however many tasks are in flight.
CREATE FUNCTION claim_submission(job_id uuid, kinds text[], lock_name text, cap integer) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  in_flight integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(lock_name));
  SELECT count(*) INTO in_flight FROM (
    SELECT 1 FROM jobs WHERE state IN ('submitting', 'submitted') AND kind = ANY (kinds) LIMIT cap
  ) AS counted;
  IF in_flight >= cap THEN
    RETURN 'cap_reached';
  END IF;
  UPDATE jobs SET state = 'submitting', submit_attempts = submit_attempts + 1, updated_at = now()
  WHERE id = job_id AND state = 'queued';
  IF FOUND THEN
    RETURN 'claimed';
  END IF;
  RETURN 'not_queued';
END
$$;
