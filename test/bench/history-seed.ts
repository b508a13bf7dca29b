/**
 * A year of a large deployment, written into a bot database in a handful of set-based
 * statements (`generate_series`, no row leaves Postgres): guilds, jobs of every kind in every
 * state (the library's songs with titles, prompts and lyrics), ledger movements whose running
 * sums are each guild's balance (so `verifyLedger` holds), account checks and audit log rows.
 * A benchmark fixture: the rows are plausible, not a history the bot could have written.
 *
 * The `busy` guilds (the ones a benchmark drives through the emulator) get `busyMovements`
 * movements and `busySongs` songs each, with `busyLikes` likes and `busyPlays` plays (and the
 * charts' summaries of them), and `busyContests` song contests a week apart (the last one
 * running) of `contestEntries` entries, each with votes; the rest is spread evenly over the
 * other guilds.
 */
import type pg from 'pg';

export interface HistorySize {
  readonly guilds: number;
  readonly jobs: number;
  readonly ledger: number;
  /** Finished songs (the library): part of `jobs`. */
  readonly songs: number;
  /** Movements of each busy guild (its CSV export). */
  readonly busyMovements: number;
  /** Songs of each busy guild. */
  readonly busySongs: number;
  /** Likes of each busy guild's songs (most on a few songs, as charts have them), over the year. */
  readonly busyLikes: number;
  /** Plays heard in voice of each busy guild's songs, over the year. */
  readonly busyPlays: number;
  /** Song contests of each busy guild, a week each, back to back up to now: the last one still running (started three days ago), the others ended with their results. */
  readonly busyContests: number;
  /** Entries of each contest (songs made during it, entered by their makers), each with 1 to 40 votes (likes given during it). */
  readonly contestEntries: number;
  /** How long the history spans: rows are spread over it, an account check an hour, a moderator action a day. */
  readonly days: number;
}

/**
 * The issue's year: 10,000 guilds, 2,000,000 jobs, 5,000,000 movements, 1,000,000 songs; a busy
 * guild of 100,000 movements and 100,000 songs with 1,000,000 likes and 200,000 plays, and a
 * contest a week (52, the last one running) of 30 entries each.
 */
export const YEAR: HistorySize = {
  guilds: 10_000,
  jobs: 2_000_000,
  ledger: 5_000_000,
  songs: 1_000_000,
  busyMovements: 100_000,
  busySongs: 100_000,
  busyLikes: 1_000_000,
  busyPlays: 200_000,
  busyContests: 52,
  contestEntries: 30,
  days: 365,
};

/** `YEAR`'s deployment times `scale` (at least one of each), for quick runs; the busy guilds keep their size. */
export function scaled(scale: number, size: HistorySize = YEAR): HistorySize {
  const of = (n: number) => Math.max(1, Math.round(n * scale));
  // A busy guild stays the issue's busy guild (within half the ledger and half the songs).
  return {
    guilds: of(size.guilds),
    jobs: of(size.jobs),
    ledger: of(size.ledger),
    songs: of(size.songs),
    busyMovements: size.busyMovements,
    busySongs: size.busySongs,
    busyLikes: size.busyLikes,
    busyPlays: size.busyPlays,
    busyContests: size.busyContests,
    contestEntries: size.contestEntries,
    days: size.days,
  };
}

export interface SeedTimings {
  readonly [step: string]: number;
}

/** Members of a seeded guild: `u<guild>-<n>`; the busy guilds' own members come from the emulator. */
const MEMBERS_PER_GUILD = 40;

/**
 * Seeds `db` (migrated, possibly holding the busy guilds already) and answers how long each
 * step took, in ms. `busy`: the guilds, with their members, that get a busy guild's share.
 */
export async function seedHistory(
  pool: pg.Pool,
  size: HistorySize,
  busy: ReadonlyArray<{ guildId: string; members: readonly string[] }>,
  tag = 'y',
): Promise<SeedTimings> {
  // One connection: the map of guilds below is a temporary table.
  const client = await pool.connect();
  try {
    return await seedOn(client, size, busy, tag);
  } finally {
    client.release();
  }
}

async function seedOn(db: pg.PoolClient, size: HistorySize, busy: ReadonlyArray<{ guildId: string; members: readonly string[] }>, tag: string): Promise<SeedTimings> {
  const timings: Record<string, number> = {};
  const step = async (name: string, text: string, values: unknown[] = []) => {
    const started = performance.now();
    await db.query(text, values);
    timings[name] = Math.round(performance.now() - started);
  };
  const busyIds = busy.map((b) => b.guildId);
  const busyMembers = busy.map((b) => `{${b.members.map((m) => `"${m}"`).join(',')}}`);
  const others = Math.max(1, size.guilds - busy.length);
  const busyMovements = Math.min(size.busyMovements * busy.length, Math.floor(size.ledger / 2));
  const busySongs = Math.min(size.busySongs * busy.length, Math.floor(size.songs / 2));

  // A map from a guild number (0 … busy-1: the busy guilds, then h<n>) to its id and members.
  await db.query('create temporary table if not exists seed_guilds (n int primary key, id text not null, members text[] not null)');
  await db.query('truncate seed_guilds');
  await db.query(
    `insert into seed_guilds
       select b.n - 1, b.id, b.members::text[] from unnest($1::text[], $2::text[]) with ordinality as b(id, members, n)
       union all
       select $3::int + g, 'h' || $5::text || lpad(g::text, 6, '0'),
              array(select 'u' || g || '-' || m from generate_series(0, ${MEMBERS_PER_GUILD - 1}) m)
         from generate_series(0, $4::int - 1) g`,
    [busyIds, busyMembers, busy.length, others, tag],
  );
  const guildCount = busy.length + others;

  // Row i of n (in time order) is one of `share` picked evenly over the n when (i × share) mod n < share.
  const picked = (i: string, share: number | string, n: number | string) => `((${i} * ${share}) % ${n} < ${share})`;
  // The guild of row i of n: the busy guilds' `busyShare`, spread over the year, the rest round the others.
  const guildOf = (i: string, busyShare: number, n: number | string) =>
    `(case when ${picked(i, busyShare, n)} then ${i} % ${Math.max(1, busy.length)} else ${busy.length} + ${i} % ${others} end)`;

  await step(
    'guilds',
    `insert into guilds (id, balance, monthly_allowance, allowance_period, created_at, updated_at)
       select id, 0, case when n % 10 = 0 then 500 else 0 end, to_char(now() - interval '1 month', 'YYYY-MM'),
              now() - interval '1 day' * ${size.days + 1}, now() - interval '1 day' * ${size.days + 1}
         from seed_guilds
       on conflict (id) do nothing`,
  );

  // Jobs, spread over the year (row i at now - days × (1 - i/jobs)): `songs` of them succeeded
  // songs (with a result), the busy guilds' among them, then the other kinds in every state.
  const isSong = picked('i', '$2::bigint', '$1::bigint');
  const jobGuild = `(case when ${isSong} then (case when ${picked('((i * $2::bigint) / $1::bigint)', busySongs, '$2::bigint')} then i % ${Math.max(1, busy.length)} else ${busy.length} + i % ${others} end) else ${busy.length} + i % ${others} end)`;
  await step(
    'jobs',
    `insert into jobs (id, guild_id, channel_id, user_id, kind, request, state, cost, upstream_task_id, locale, guild_locale,
                       result, error, delivery_state, message_id, created_at, updated_at, submitted_at, completed_at, delivered_at, deadline_at)
     select md5($3::text || ':' || i)::uuid, g.id, 'c' || g.n, g.members[1 + i % array_length(g.members, 1)], k.kind,
            case k.kind
              when 'song' then jsonb_build_object('kind', 'song', 'title', w.title, 'prompt', w.prompt, 'lyrics', w.lyrics, 'model', 'chirp-v4')
              when 'persona_song' then jsonb_build_object('kind', 'persona_song', 'voiceId', gen_random_uuid(), 'personaId', 'p' || i, 'title', w.title, 'prompt', w.prompt)
              when 'lyrics' then jsonb_build_object('kind', 'lyrics', 'prompt', w.prompt)
              when 'voice' then jsonb_build_object('kind', 'voice', 'name', 'voice ' || i)
              else jsonb_build_object('kind', k.kind, 'clipId', 'clip-' || i)
            end,
            s.state, 10,
            case when s.state in ('submitted', 'succeeded', 'failed', 'timed_out') then 'task-' || $3::text || '-' || i end,
            'en-US', 'en-US',
            case when s.state = 'succeeded' then jsonb_build_object('state', 'SUCCESS', 'clips', jsonb_build_array(jsonb_build_object(
              'clipId', 'clip-' || i, 'title', w.title, 'lyrics', w.lyrics, 'tags', 'pop',
              'audioUrl', 'https://cdn.example/' || i || '.mp3', 'imageUrl', 'https://cdn.example/' || i || '.jpg', 'durationSeconds', 180))) end,
            case when s.state in ('failed', 'timed_out') then jsonb_build_object('kind', s.state, 'message', 'The service could not make it.', 'creditsReturned', 10) end,
            case when s.state in ('succeeded', 'failed', 'timed_out') then 'delivered' else 'pending' end,
            case when s.state in ('succeeded', 'failed', 'timed_out') then 'm' || i end,
            t.at, t.at, t.at + interval '2 seconds',
            case when s.state in ('succeeded', 'failed', 'timed_out', 'cancelled') then t.at + interval '90 seconds' end,
            case when s.state in ('succeeded', 'failed', 'timed_out') then t.at + interval '91 seconds' end,
            t.at + interval '10 minutes'
       from generate_series(0, $1::bigint - 1) i
       join seed_guilds g on g.n = ${jobGuild}
       cross join lateral (select now() - interval '1 day' * ${size.days} * (1 - i::float8 / $1) - interval '1 hour' as at) t
       cross join lateral (select
            case when ${isSong} then (case when i % 20 = 0 then 'persona_song' else 'song' end)
                 else (array['lyrics', 'voice', 'video', 'download', 'upload', 'song', 'lyrics', 'song'])[1 + i % 8] end as kind) k
       cross join lateral (select
            case when ${isSong} then 'succeeded'
                 when i between $1::bigint - 30 and $1::bigint - 21 then 'queued'
                 when i between $1::bigint - 20 and $1::bigint - 11 then 'submitting'
                 when i between $1::bigint - 10 and $1::bigint - 1 then 'submitted'
                 when i % 10 = 4 then 'failed' when i % 50 = 5 then 'timed_out' when i % 50 = 6 then 'cancelled'
                 else (case when k.kind in ('song', 'persona_song') then 'failed' else 'succeeded' end) end as state) s
       cross join lateral (select
            'Song ' || i || ' of ' || (array['summer', 'rain', 'the night', 'old roads', 'neon', 'the sea'])[1 + i % 6] as title,
            (array['upbeat synthwave with a female voice', 'slow acoustic ballad about ', 'lo-fi hip hop beat, rainy', 'epic orchestral theme for '])[1 + i % 4]
              || ' ' || md5(i::text) as prompt,
            '[Verse]' || chr(10) || repeat('walking down the ' || (array['street', 'river', 'hall', 'line'])[1 + i % 4] || ' again ', 8)
              || chr(10) || '[Chorus]' || chr(10) || md5((i * 7)::text) || ' ' || repeat('la ', 12) as lyrics) w`,
    [size.jobs, size.songs, tag],
  );

  // Likes and plays of each busy guild's songs, spread over the year, most on a few songs (the
  // song of rank r among n gets about 1/√(r·n) of them), and the charts' summaries they add up to.
  for (const guildId of busyIds) {
    // The guild's songs as one array, newest first: a pick is an index into it, not a join.
    const songIds = `select coalesce(array_agg(id order by created_at desc, id), '{}') as ids from jobs
      where guild_id = $1 and state = 'succeeded' and kind in ('song', 'persona_song') and removed_at is null`;
    const pickSong = (i: string) => `c.ids[1 + floor(cardinality(c.ids) * power(${i} * 0.6180339887498949 - floor(${i} * 0.6180339887498949), 2))::int]`;
    const when = (i: string) => `now() - interval '1 day' * ${size.days} * (${i} * 0.7548776662466927 - floor(${i} * 0.7548776662466927))`;
    await step(
      'likes',
      `with c as (${songIds})
       insert into song_likes (job_id, user_id, guild_id, liked_at, last_press, created_at, updated_at)
       select ${pickSong('i')}, 'fan-' || $3::text || '-' || i, $1, t.at, 1000 + i, t.at, t.at
         from c cross join generate_series(0, $2::bigint - 1) i
         cross join lateral (select ${when('i')} as at) t
        where cardinality(c.ids) > 0`,
      [guildId, size.busyLikes, tag],
    );
    await step(
      'plays',
      `with c as (${songIds})
       insert into song_plays (play_key, job_id, guild_id, heard_ms, played_at)
       select 'seed-' || $3::text || '-' || $1 || '-' || i, ${pickSong('(i + 0.5)')}, $1, 120000, ${when('(i + 0.5)')}
         from c cross join generate_series(0, $2::bigint - 1) i
        where cardinality(c.ids) > 0`,
      [guildId, size.busyPlays, tag],
    );
    await seedContests(db, step, size, guildId, tag);
    await step(
      'chart summaries',
      `insert into chart_counts (guild_id, metric, period, period_start, job_id, count)
       select $1, e.metric, p.period, p.start, e.job_id, count(*)::int
         from (select 'likes' as metric, job_id, liked_at as at from song_likes where guild_id = $1 and user_id like 'fan-' || $2::text || '-%'
               union all
               select 'plays', job_id, played_at from song_plays where guild_id = $1 and play_key like 'seed-' || $2::text || '-%') e
         cross join lateral (values ('week', date_trunc('week', e.at at time zone 'UTC')::date), ('month', date_trunc('month', e.at at time zone 'UTC')::date), ('all', date '1970-01-01')) p(period, start)
        group by 1, 2, 3, 4, 5
       on conflict (guild_id, metric, period, period_start, job_id) do update set count = chart_counts.count + excluded.count`,
      [guildId, tag],
    );
    await step(
      'like counts',
      `update jobs set like_count = like_count + l.n
         from (select job_id, count(*)::int as n from song_likes where guild_id = $1 and user_id like 'fan-' || $2::text || '-%' group by job_id) l
        where jobs.id = l.job_id`,
      [guildId, tag],
    );
    // Each ended contest's results, from its votes (the fans' likes during it count too), as its end keeps them.
    await step(
      'contest results',
      `update contests c set results = jsonb_build_object(
         'entries', (select count(*) from contest_entries e where e.contest_id = c.id),
         'top', coalesce((select jsonb_agg(jsonb_build_object('jobId', s.job_id, 'userId', s.user_id, 'title', s.title, 'votes', s.votes) order by s.votes desc, s.entered_at)
            from (select e.job_id, e.user_id, e.entered_at, j.request->>'title' as title, count(l.user_id)::int as votes
                    from contest_entries e join jobs j on j.id = e.job_id
                    left join song_likes l on l.job_id = e.job_id and l.liked_at >= c.started_at and l.liked_at < c.ends_at and l.user_id <> e.user_id
                   where e.contest_id = c.id
                   group by 1, 2, 3, 4 order by votes desc, e.entered_at limit 3) s), '[]'::jsonb))
        where c.guild_id = $1 and c.state = 'ended' and c.results is null`,
      [guildId],
    );
  }

  // Ledger: a starting grant per guild, then reserves, releases and grants; running sums per guild as balance_after.
  const ledgerGuild = guildOf('i', busyMovements, '$1::bigint');
  await step(
    'ledger',
    `insert into credit_ledger (guild_id, key, kind, amount, balance_after, job_id, user_id, actor_id, reason, created_at)
     select id, key, kind, amount, 1000000 + sum(amount) over (partition by id order by i), job_id, user_id, actor_id, reason, at
       from (
         select g.id, i, 'seed-' || $2::text || ':' || i as key, m.kind,
                case m.kind when 'reserve' then -10 when 'release' then 10 when 'refund' then 10 when 'allowance' then 500 else 25 end as amount,
                case when m.kind in ('reserve', 'release', 'refund') then md5($2::text || ':' || (i % $3))::uuid end as job_id,
                case when m.kind in ('reserve', 'release', 'refund') then g.members[1 + i % array_length(g.members, 1)] end as user_id,
                case when m.kind = 'grant' then 'moderator-' || g.n end as actor_id,
                case when m.kind = 'grant' then 'Thanks for the "event", friends, again' end as reason,
                now() - interval '1 day' * ${size.days} * (1 - i::float8 / $1) - interval '1 hour' as at
           from generate_series(0, $1::bigint - 1) i
           join seed_guilds g on g.n = ${ledgerGuild}
           cross join lateral (select (array['reserve', 'reserve', 'reserve', 'reserve', 'release', 'refund', 'reserve', 'grant', 'reserve', 'allowance'])[1 + (i / ${guildCount}) % 10] as kind) m
       ) rows`,
    [size.ledger, tag, size.jobs],
  );
  // Each guild's starting grant (the 1,000,000 every balance_after above counts from), dated first.
  await step(
    'ledger grants',
    `insert into credit_ledger (guild_id, key, kind, amount, balance_after, actor_id, reason, created_at)
     select id, 'seed-start-' || $1::text || ':' || id, 'grant', 1000000, 1000000, 'owner', 'starting credits', now() - interval '1 day' * ${size.days + 1} from seed_guilds`,
    [tag],
  );
  await step(
    'balances',
    `update guilds set balance = s.total
       from (select guild_id, sum(amount)::int as total from credit_ledger where guild_id in (select id from seed_guilds) group by guild_id) s
      where guilds.id = s.guild_id`,
  );

  // An hourly account check for a year, and a moderator action a day per 100 guilds.
  await step(
    'account checks',
    `insert into account_checks (checked_at, source, credits, extra_credits, balance, upstream_spent_total, expected, drift, low_threshold, low_alert_armed)
     select now() - interval '1 hour' * h, 'hourly', 100000 - h, 0, 100000 - h, h * 10, 100000 - h, 0, 1000, true
       from generate_series(${size.days * 24}, 1, -1) h`,
  );
  await step(
    'audit log',
    `insert into audit_log (guild_id, actor_id, action, details, created_at)
     select g.id, 'moderator-' || g.n, (array['settings', 'freeze', 'unfreeze', 'user-limit', 'allowance'])[1 + d % 5],
            jsonb_build_object('key', 'seed-audit-' || $1::text || ':' || g.n || ':' || d, 'value', d),
            now() - interval '1 day' * d
       from seed_guilds g cross join generate_series(1, ${size.days}) d
      where g.n < ${busy.length} or g.n % 100 = 0`,
    [tag],
  );
  await step('analyze', 'analyze');
  await db.query('drop table seed_guilds');
  return timings;
}

/**
 * A busy guild's contests (see `HistorySize.busyContests`), their entries and their votes. The
 * votes are likes by fans of `tag`, so the chart summaries and like counts seeded after count
 * them. A contest still running from an earlier seed of the same database ends first: one runs
 * at a time.
 */
async function seedContests(
  db: pg.PoolClient,
  step: (name: string, text: string, values?: unknown[]) => Promise<void>,
  size: HistorySize,
  guildId: string,
  tag: string,
): Promise<void> {
  if (size.busyContests < 1) return;
  await db.query(`update contests set state = 'ended', ended_at = now() where guild_id = $1 and state = 'running'`, [guildId]);
  const seededBy = `seed-moderator-${tag}`;
  // The running one started three days ago (less in a short history); each earlier one a week before the next.
  await step(
    'contests',
    `insert into contests (id, guild_id, channel_id, theme, state, started_by, started_at, ends_at, max_entries, locale, ended_at, results_message_id, created_at)
     select md5('contest:' || $3::text || ':' || $1 || ':' || k)::uuid, $1, 'c0',
            'Theme ' || k || ': ' || (array['summer', 'rain', 'the night', 'old roads', 'neon', 'the sea'])[1 + k % 6],
            case when k = $2::int - 1 then 'running' else 'ended' end, $4, s.at, s.at + interval '7 days', 10, 'en-US',
            case when k < $2::int - 1 then s.at + interval '7 days' end,
            case when k < $2::int - 1 then 'results-' || $3::text || '-' || k end, s.at
       from generate_series(0, $2::int - 1) k
       cross join lateral (select now() - interval '1 day' * least(3, ${size.days} * 0.75) - interval '7 days' * ($2::int - 1 - k) as at) s`,
    [guildId, size.busyContests, tag, seededBy],
  );
  await step(
    'contest entries',
    `insert into contest_entries (contest_id, job_id, user_id, entered_at)
     select c.id, j.id, j.user_id, j.created_at + interval '1 minute'
       from contests c
       cross join lateral (
         select id, user_id, created_at from jobs
          where guild_id = $1 and state = 'succeeded' and kind in ('song', 'persona_song') and removed_at is null
            and created_at >= c.started_at and created_at < least(c.ends_at, now() - interval '2 minutes')
          order by md5(id::text) limit $2) j
      where c.guild_id = $1 and c.started_by = $3`,
    [guildId, size.contestEntries, seededBy],
  );
  await step(
    'contest votes',
    `insert into song_likes (job_id, user_id, guild_id, liked_at, last_press, created_at, updated_at)
     select e.job_id, 'fan-' || $2::text || '-vote-' || left(e.contest_id::text, 8) || '-' || left(e.job_id::text, 8) || '-' || v, $1, t.at, 2000000000 + v, t.at, t.at
       from contest_entries e
       join contests c on c.id = e.contest_id
       cross join lateral generate_series(1, 1 + abs(hashtext(e.job_id::text)) % 40) v
       cross join lateral (select e.entered_at + (least(c.ends_at, now() - interval '1 minute') - e.entered_at) * (v::float8 / 42) as at) t
      where c.guild_id = $1 and c.started_by = $3
     on conflict (job_id, user_id) do nothing`,
    [guildId, tag, seededBy],
  );
}
