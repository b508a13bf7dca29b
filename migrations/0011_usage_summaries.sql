CREATE TABLE "credit_usage_guild" (
	"guild_id" text NOT NULL,
	"day" date NOT NULL,
	"jobs" integer NOT NULL,
	"charged" bigint NOT NULL,
	"returned" bigint NOT NULL,
	CONSTRAINT "credit_usage_guild_guild_id_day_pk" PRIMARY KEY("guild_id","day")
);
--> statement-breakpoint
CREATE TABLE "credit_usage_member" (
	"guild_id" text NOT NULL,
	"user_id" text NOT NULL,
	"day" date NOT NULL,
	"jobs" integer NOT NULL,
	"charged" bigint NOT NULL,
	"returned" bigint NOT NULL,
	CONSTRAINT "credit_usage_member_guild_id_user_id_day_pk" PRIMARY KEY("guild_id","user_id","day")
);
--> statement-breakpoint
-- Inserts into credit_ledger (every movement the bot makes): a charge adds its job to its member's
-- and its guild's day; a release or refund adds what came back to the day of its job's charge.
-- One statement per ledger statement, in its transaction, after the guild's row is locked.
CREATE FUNCTION credit_usage_follow_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  WITH delta AS (
    SELECT m.guild_id, coalesce(m.user_id, '') AS user_id, (m.created_at AT TIME ZONE 'UTC')::date AS day,
      1 AS jobs, -m.amount::bigint AS charged, 0::bigint AS returned
    FROM moved m WHERE m.kind = 'reserve'
    UNION ALL
    SELECT r.guild_id, coalesce(r.user_id, ''), (r.created_at AT TIME ZONE 'UTC')::date, 0, 0, m.amount::bigint
    FROM moved m JOIN credit_ledger r ON r.job_id = m.job_id AND r.kind = 'reserve'
    WHERE m.kind IN ('release', 'refund')
  ), member AS (
    INSERT INTO credit_usage_member AS u (guild_id, user_id, day, jobs, charged, returned)
    SELECT guild_id, user_id, day, sum(jobs), sum(charged), sum(returned) FROM delta
    GROUP BY guild_id, user_id, day ORDER BY guild_id, user_id, day
    ON CONFLICT (guild_id, user_id, day) DO UPDATE
      SET jobs = u.jobs + excluded.jobs, charged = u.charged + excluded.charged, returned = u.returned + excluded.returned
  )
  INSERT INTO credit_usage_guild AS g (guild_id, day, jobs, charged, returned)
  SELECT guild_id, day, sum(jobs), sum(charged), sum(returned) FROM delta
  GROUP BY guild_id, day ORDER BY guild_id, day
  ON CONFLICT (guild_id, day) DO UPDATE
    SET jobs = g.jobs + excluded.jobs, charged = g.charged + excluded.charged, returned = g.returned + excluded.returned;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Counts the given member days again from the ledger, and their guild days from those. The ledger
-- is append-only, so only repairs and tests' backdating come here (updates and deletes).
CREATE FUNCTION credit_usage_recount(guild_ids text[], user_ids text[], days date[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM credit_usage_member u
  USING unnest(guild_ids, user_ids, days) AS k(guild_id, user_id, day)
  WHERE u.guild_id = k.guild_id AND u.user_id = k.user_id AND u.day = k.day;
  INSERT INTO credit_usage_member (guild_id, user_id, day, jobs, charged, returned)
  SELECT k.guild_id, k.user_id, k.day, count(*), sum(-r.amount), coalesce(sum(back.amount), 0)
  FROM (SELECT DISTINCT * FROM unnest(guild_ids, user_ids, days) AS k(guild_id, user_id, day)) k
  JOIN credit_ledger r ON r.kind = 'reserve' AND r.guild_id = k.guild_id AND coalesce(r.user_id, '') = k.user_id
    AND r.created_at >= k.day::timestamp AT TIME ZONE 'UTC' AND r.created_at < (k.day + 1)::timestamp AT TIME ZONE 'UTC'
  CROSS JOIN LATERAL (
    SELECT sum(b.amount)::bigint AS amount FROM credit_ledger b WHERE b.job_id = r.job_id AND b.kind IN ('release', 'refund')
  ) back
  GROUP BY k.guild_id, k.user_id, k.day;
  DELETE FROM credit_usage_guild g
  USING unnest(guild_ids, days) AS k(guild_id, day)
  WHERE g.guild_id = k.guild_id AND g.day = k.day;
  INSERT INTO credit_usage_guild (guild_id, day, jobs, charged, returned)
  SELECT u.guild_id, u.day, sum(u.jobs), sum(u.charged), sum(u.returned)
  FROM credit_usage_member u
  JOIN (SELECT DISTINCT * FROM unnest(guild_ids, days) AS k(guild_id, day)) k ON u.guild_id = k.guild_id AND u.day = k.day
  GROUP BY u.guild_id, u.day;
END
$$;
--> statement-breakpoint
-- Updates and deletes (the ledger is append-only: repairs, and tests that backdate): the member
-- days they may have changed, those of the charges they touched (before and after) and of the
-- charges whose releases or refunds they touched, are counted again.
CREATE FUNCTION credit_usage_follow_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  touched credit_ledger[];
  guild_ids text[];
  user_ids text[];
  days date[];
BEGIN
  IF TG_OP = 'UPDATE' THEN
    SELECT array_agg(t) INTO touched FROM (SELECT * FROM old_rows UNION ALL SELECT * FROM new_rows) t;
  ELSE
    SELECT array_agg(t) INTO touched FROM old_rows t;
  END IF;
  WITH t AS (SELECT * FROM unnest(touched)), keys AS (
    SELECT guild_id, coalesce(user_id, '') AS user_id, (created_at AT TIME ZONE 'UTC')::date AS day FROM t WHERE kind = 'reserve'
    UNION
    SELECT r.guild_id, coalesce(r.user_id, ''), (r.created_at AT TIME ZONE 'UTC')::date
    FROM t JOIN credit_ledger r ON r.job_id = t.job_id AND r.kind = 'reserve'
    WHERE t.kind IN ('release', 'refund')
  )
  SELECT array_agg(guild_id), array_agg(user_id), array_agg(day) INTO guild_ids, user_ids, days FROM keys;
  IF guild_ids IS NOT NULL THEN
    PERFORM credit_usage_recount(guild_ids, user_ids, days);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION credit_usage_reset() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM credit_usage_member;
  DELETE FROM credit_usage_guild;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- From the commit on, the triggers count every movement. SHARE ROW EXCLUSIVE (which creating a
-- trigger takes anyway) holds off new movements only while the four are created; the history
-- before is counted by credit_usage_backfill. Why: docs/decisions/usage-summaries.md
LOCK TABLE credit_ledger IN SHARE ROW EXCLUSIVE MODE;
--> statement-breakpoint
CREATE TRIGGER credit_usage_insert AFTER INSERT ON credit_ledger
REFERENCING NEW TABLE AS moved FOR EACH STATEMENT EXECUTE FUNCTION credit_usage_follow_insert();
--> statement-breakpoint
CREATE TRIGGER credit_usage_update AFTER UPDATE ON credit_ledger
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION credit_usage_follow_change();
--> statement-breakpoint
CREATE TRIGGER credit_usage_delete AFTER DELETE ON credit_ledger
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION credit_usage_follow_change();
--> statement-breakpoint
CREATE TRIGGER credit_usage_truncate AFTER TRUNCATE ON credit_ledger FOR EACH STATEMENT EXECUTE FUNCTION credit_usage_reset();
