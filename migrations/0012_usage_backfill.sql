-- The functions that fill the usage summaries (0011) from the ledger's history, guild by guild,
-- while the bot runs (the online step migrations/online/0006_credit_usage_backfill.sql). Apart
-- from 0011, and replaced if present, so that a database which applied an earlier 0011 (one that
-- filled under its lock) gets them too; there the fill only recounts what is already right.
-- Counts one guild's member days in [from_day, to_day) again from the ledger, and its guild days
-- from those, replacing what was there. The caller holds the guild's row, as a movement does, so
-- no movement of the guild is half done meanwhile and the count is exact.
CREATE OR REPLACE FUNCTION credit_usage_recount_guild(of_guild text, from_day date, to_day date) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM credit_usage_member WHERE guild_id = of_guild AND day >= from_day AND day < to_day;
  INSERT INTO credit_usage_member (guild_id, user_id, day, jobs, charged, returned)
  SELECT r.guild_id, coalesce(r.user_id, ''), (r.created_at AT TIME ZONE 'UTC')::date, count(*), sum(-r.amount), coalesce(sum(back.amount), 0)
  FROM credit_ledger r
  CROSS JOIN LATERAL (
    SELECT sum(b.amount)::bigint AS amount FROM credit_ledger b WHERE b.job_id = r.job_id AND b.kind IN ('release', 'refund')
  ) back
  WHERE r.guild_id = of_guild AND r.kind = 'reserve'
    AND r.created_at >= from_day::timestamp AT TIME ZONE 'UTC' AND r.created_at < to_day::timestamp AT TIME ZONE 'UTC'
  GROUP BY 1, 2, 3;
  DELETE FROM credit_usage_guild WHERE guild_id = of_guild AND day >= from_day AND day < to_day;
  INSERT INTO credit_usage_guild (guild_id, day, jobs, charged, returned)
  SELECT guild_id, day, sum(jobs), sum(charged), sum(returned) FROM credit_usage_member
  WHERE guild_id = of_guild AND day >= from_day AND day < to_day
  GROUP BY guild_id, day;
END
$$;
--> statement-breakpoint
-- The history from before this migration, counted while the bot runs (the online step
-- migrations/online/0006_credit_usage_backfill.sql calls it, outside any transaction): guild by
-- guild, a slice of whole days of up to `slice` charges at a time, each recounted and committed
-- under the guild's row lock. Movements of that guild wait for one slice; the others never.
-- Recounting replaces, so it is exact whatever the triggers added before, and may run again.
CREATE OR REPLACE PROCEDURE credit_usage_backfill(slice integer DEFAULT 2000)
LANGUAGE plpgsql AS $$
DECLARE
  of_guild text;
  from_day date;
  to_day date;
  last_charge timestamptz;
BEGIN
  FOR of_guild IN SELECT id FROM guilds ORDER BY id LOOP
    from_day := '-infinity';
    LOOP
      -- The slice ends after the day of its last charge; the guild's last slice never ends.
      SELECT created_at INTO last_charge FROM credit_ledger
      WHERE guild_id = of_guild AND kind = 'reserve' AND created_at >= from_day::timestamp AT TIME ZONE 'UTC'
      ORDER BY created_at OFFSET slice - 1 LIMIT 1;
      to_day := CASE WHEN last_charge IS NULL THEN 'infinity'::date ELSE (last_charge AT TIME ZONE 'UTC')::date + 1 END;
      PERFORM 1 FROM guilds WHERE id = of_guild FOR NO KEY UPDATE;
      PERFORM credit_usage_recount_guild(of_guild, from_day, to_day);
      COMMIT;
      EXIT WHEN to_day = 'infinity'::date;
      from_day := to_day;
    END LOOP;
  END LOOP;
END
$$;
--> statement-breakpoint
-- Whether the backfill above has run to its end (its online step is recorded): until then the
-- summaries miss the days before this migration, and `usage` counts from the ledger instead.
CREATE OR REPLACE FUNCTION credit_usage_filled() RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF to_regclass('drizzle.__online_steps') IS NULL THEN
    RETURN false;
  END IF;
  RETURN EXISTS (SELECT 1 FROM drizzle.__online_steps WHERE name = '0006_credit_usage_backfill.sql');
END
$$;
