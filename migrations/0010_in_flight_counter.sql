CREATE TABLE "jobs_in_flight" (
	"kind" text PRIMARY KEY NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "jobs_in_flight_count_non_negative" CHECK ("jobs_in_flight"."count" >= 0)
);
--> statement-breakpoint
-- Keeps jobs_in_flight in step with the jobs in 'submitting' or 'submitted', whoever moves them
-- (claims, completions, the reconciler, a test's insert). Deferred to the commit, so a transaction
-- takes the counter's row last and holds it only while it commits; why and the lock order:
-- docs/decisions/in-flight-counter.md
CREATE FUNCTION jobs_in_flight_follow() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    IF OLD.state IN ('submitting', 'submitted') THEN
      UPDATE jobs_in_flight SET count = count - 1 WHERE kind = OLD.kind;
    END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    IF NEW.state IN ('submitting', 'submitted') THEN
      INSERT INTO jobs_in_flight (kind, count) VALUES (NEW.kind, 1)
      ON CONFLICT (kind) DO UPDATE SET count = jobs_in_flight.count + 1;
    END IF;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- TRUNCATE fires no row trigger: emptying jobs empties the counter with it.
CREATE FUNCTION jobs_in_flight_reset() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM jobs_in_flight;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- No job moves between here and the commit, so the count below is exact when the triggers take
-- over. SHARE ROW EXCLUSIVE waits for the writes of jobs in progress and holds off new ones
-- (reads go on) for the time of one count over the open jobs' index.
LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER jobs_in_flight_insert AFTER INSERT ON jobs DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW WHEN (NEW.state IN ('submitting', 'submitted')) EXECUTE FUNCTION jobs_in_flight_follow();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER jobs_in_flight_update AFTER UPDATE OF state, kind ON jobs DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW WHEN (
  (OLD.state IN ('submitting', 'submitted') OR NEW.state IN ('submitting', 'submitted'))
  AND ((OLD.state IN ('submitting', 'submitted')) IS DISTINCT FROM (NEW.state IN ('submitting', 'submitted')) OR OLD.kind IS DISTINCT FROM NEW.kind)
) EXECUTE FUNCTION jobs_in_flight_follow();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER jobs_in_flight_delete AFTER DELETE ON jobs DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW WHEN (OLD.state IN ('submitting', 'submitted')) EXECUTE FUNCTION jobs_in_flight_follow();
--> statement-breakpoint
CREATE TRIGGER jobs_in_flight_truncate AFTER TRUNCATE ON jobs FOR EACH STATEMENT EXECUTE FUNCTION jobs_in_flight_reset();
--> statement-breakpoint
INSERT INTO jobs_in_flight (kind, count)
SELECT kind, count(*) FROM jobs WHERE state IN ('submitting', 'submitted') GROUP BY kind;
--> statement-breakpoint
-- The claim of 0005, reading the counter instead of counting the jobs: the same arguments and
-- outcomes, and a cost that no longer grows with the tasks in flight. Under the task type's lock,
-- the sum sees every claim committed before it (a claim's increment is made as it commits, before
-- its lock is let go); an exit committing meanwhile only makes the sum high for a moment.
CREATE OR REPLACE FUNCTION claim_submission(job_id uuid, kinds text[], lock_name text, cap integer) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  in_flight integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(lock_name));
  SELECT coalesce(sum(count), 0) INTO in_flight FROM jobs_in_flight WHERE kind = ANY (kinds);
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
