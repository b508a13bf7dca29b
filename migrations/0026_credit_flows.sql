CREATE TABLE "credit_flows_daily" (
	"guild_id" text NOT NULL,
	"day" date NOT NULL,
	"kind" text NOT NULL,
	"jobs" integer NOT NULL,
	"charged" bigint NOT NULL,
	"returned" bigint NOT NULL,
	CONSTRAINT "credit_flows_daily_guild_id_day_kind_pk" PRIMARY KEY("guild_id","day","kind")
);
--> statement-breakpoint
-- The chart's name of a job's kind: a persona's songs count as voice; a charge without its job row
-- (none is written so) counts as a song.
CREATE FUNCTION credit_flow_kind(job_kind text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN job_kind IN ('voice', 'persona_song') THEN 'voice' WHEN job_kind IN ('lyrics', 'video', 'download', 'upload') THEN job_kind ELSE 'song' END
$$;
--> statement-breakpoint
-- Inserts into credit_ledger: a charge adds its job to its day and kind (the job row is written by
-- the same statement, and this runs at its end); a release or refund adds what came back to the
-- day of its job's charge; a grant, an allowance (or a subscription's) and a purchase add to
-- their day and source. One statement per ledger statement, in its transaction.
CREATE FUNCTION credit_flows_follow_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH delta AS (
    SELECT m.guild_id, (m.created_at AT TIME ZONE 'UTC')::date AS day, credit_flow_kind(j.kind) AS kind,
      1 AS jobs, -m.amount::bigint AS charged, 0::bigint AS returned
    FROM moved m LEFT JOIN jobs j ON j.id = m.job_id WHERE m.kind = 'reserve'
    UNION ALL
    SELECT r.guild_id, (r.created_at AT TIME ZONE 'UTC')::date, credit_flow_kind(j.kind), 0, 0, m.amount::bigint
    FROM moved m JOIN credit_ledger r ON r.job_id = m.job_id AND r.kind = 'reserve' LEFT JOIN jobs j ON j.id = m.job_id
    WHERE m.kind IN ('release', 'refund')
    UNION ALL
    SELECT m.guild_id, (m.created_at AT TIME ZONE 'UTC')::date, CASE m.kind WHEN 'subscription' THEN 'allowance' ELSE m.kind END,
      1, m.amount::bigint, 0
    FROM moved m WHERE m.kind IN ('grant', 'allowance', 'subscription', 'purchase')
  )
  INSERT INTO credit_flows_daily AS f (guild_id, day, kind, jobs, charged, returned)
  SELECT guild_id, day, kind, sum(jobs), sum(charged), sum(returned) FROM delta
  GROUP BY guild_id, day, kind ORDER BY guild_id, day, kind
  ON CONFLICT (guild_id, day, kind) DO UPDATE
    SET jobs = f.jobs + excluded.jobs, charged = f.charged + excluded.charged, returned = f.returned + excluded.returned;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Counts one guild's days in [from_day, to_day) again from the ledger, replacing what was there.
CREATE FUNCTION credit_flows_recount_guild(of_guild text, from_day date, to_day date) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM credit_flows_daily WHERE guild_id = of_guild AND day >= from_day AND day < to_day;
  INSERT INTO credit_flows_daily (guild_id, day, kind, jobs, charged, returned)
  SELECT of_guild, day, kind, sum(jobs), sum(charged), sum(returned) FROM (
    SELECT (r.created_at AT TIME ZONE 'UTC')::date AS day, credit_flow_kind(j.kind) AS kind, 1 AS jobs, -r.amount::bigint AS charged,
      coalesce(back.amount, 0)::bigint AS returned
    FROM credit_ledger r
    LEFT JOIN jobs j ON j.id = r.job_id
    CROSS JOIN LATERAL (
      SELECT sum(b.amount)::bigint AS amount FROM credit_ledger b WHERE b.job_id = r.job_id AND b.kind IN ('release', 'refund')
    ) back
    WHERE r.guild_id = of_guild AND r.kind = 'reserve'
      AND r.created_at >= from_day::timestamp AT TIME ZONE 'UTC' AND r.created_at < to_day::timestamp AT TIME ZONE 'UTC'
    UNION ALL
    SELECT (m.created_at AT TIME ZONE 'UTC')::date, CASE m.kind WHEN 'subscription' THEN 'allowance' ELSE m.kind END, 1, m.amount::bigint, 0
    FROM credit_ledger m
    WHERE m.guild_id = of_guild AND m.kind IN ('grant', 'allowance', 'subscription', 'purchase')
      AND m.created_at >= from_day::timestamp AT TIME ZONE 'UTC' AND m.created_at < to_day::timestamp AT TIME ZONE 'UTC'
  ) rows
  GROUP BY day, kind;
END
$$;
--> statement-breakpoint
-- Updates and deletes (the ledger is append-only: repairs, and tests that backdate): the days they
-- may have changed, their own and those of the charges their releases or refunds belong to, are
-- counted again.
CREATE FUNCTION credit_flows_follow_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  touched credit_ledger[];
  key record;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    SELECT array_agg(t) INTO touched FROM (SELECT * FROM old_rows UNION ALL SELECT * FROM new_rows) t;
  ELSE
    SELECT array_agg(t) INTO touched FROM old_rows t;
  END IF;
  FOR key IN
    WITH t AS (SELECT * FROM unnest(touched))
    SELECT guild_id, (created_at AT TIME ZONE 'UTC')::date AS day FROM t
    UNION
    SELECT r.guild_id, (r.created_at AT TIME ZONE 'UTC')::date
    FROM t JOIN credit_ledger r ON r.job_id = t.job_id AND r.kind = 'reserve'
    WHERE t.kind IN ('release', 'refund')
  LOOP
    PERFORM credit_flows_recount_guild(key.guild_id, key.day, key.day + 1);
  END LOOP;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION credit_flows_reset() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM credit_flows_daily;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- The history before this migration, counted while the bot runs (the online step
-- migrations/online/0010_credit_flows_backfill.sql calls it, outside any transaction), as
-- credit_usage_backfill counts it: guild by guild, whole days of up to `slice` movements at a time,
-- each recounted and committed under the guild's row lock. Recounting replaces, so it may run again.
CREATE PROCEDURE credit_flows_backfill(slice integer DEFAULT 2000)
LANGUAGE plpgsql AS $$
DECLARE
  of_guild text;
  from_day date;
  to_day date;
  last_move timestamptz;
BEGIN
  FOR of_guild IN SELECT id FROM guilds ORDER BY id LOOP
    from_day := '-infinity';
    LOOP
      SELECT created_at INTO last_move FROM credit_ledger
      WHERE guild_id = of_guild AND created_at >= from_day::timestamp AT TIME ZONE 'UTC'
      ORDER BY created_at OFFSET slice - 1 LIMIT 1;
      to_day := CASE WHEN last_move IS NULL THEN 'infinity'::date ELSE (last_move AT TIME ZONE 'UTC')::date + 1 END;
      PERFORM 1 FROM guilds WHERE id = of_guild FOR NO KEY UPDATE;
      PERFORM credit_flows_recount_guild(of_guild, from_day, to_day);
      COMMIT;
      EXIT WHEN to_day = 'infinity'::date;
      from_day := to_day;
    END LOOP;
  END LOOP;
END
$$;
--> statement-breakpoint
-- Whether the backfill above has run to its end (its online step is recorded): until then the
-- dashboard's chart counts from the ledger.
CREATE FUNCTION credit_flows_filled() RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF to_regclass('drizzle.__online_steps') IS NULL THEN
    RETURN false;
  END IF;
  RETURN EXISTS (SELECT 1 FROM drizzle.__online_steps WHERE name = '0010_credit_flows_backfill.sql');
END
$$;
--> statement-breakpoint
-- From the commit on, the triggers count every movement; the history before is counted by
-- credit_flows_backfill. Why: docs/decisions/dashboard-charts.md
LOCK TABLE credit_ledger IN SHARE ROW EXCLUSIVE MODE;
--> statement-breakpoint
CREATE TRIGGER credit_flows_insert AFTER INSERT ON credit_ledger
REFERENCING NEW TABLE AS moved FOR EACH STATEMENT EXECUTE FUNCTION credit_flows_follow_insert();
--> statement-breakpoint
CREATE TRIGGER credit_flows_update AFTER UPDATE ON credit_ledger
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION credit_flows_follow_change();
--> statement-breakpoint
CREATE TRIGGER credit_flows_delete AFTER DELETE ON credit_ledger
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION credit_flows_follow_change();
--> statement-breakpoint
CREATE TRIGGER credit_flows_truncate AFTER TRUNCATE ON credit_ledger FOR EACH STATEMENT EXECUTE FUNCTION credit_flows_reset();
