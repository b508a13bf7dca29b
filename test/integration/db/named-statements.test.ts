/**
 * Every command starts with the guild's read and, once admitted, the reservation paying for its
 * job: each one named statement, whatever the member's roles, the kinds counted or the values,
 * so Postgres parses and plans it once per connection. Checked on the server: its list of the
 * connection's prepared statements, after reads with different roles and kinds and several
 * reservations, holds each once.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { reserveForJob } from '../../../src/credits/index.js';
import { connectDatabase } from '../../../src/db/client.js';
import { loadGuild } from '../../../src/guilds/settings.js';
import { jobs } from '../../../src/db/schema.js';
import { createTestDatabase } from '../../support/database.js';

const test = await createTestDatabase();

describe('named statements', () => {
  it('the guild read is prepared once per connection, whatever its values', async () => {
    // One connection, so that every statement below meets the same prepared list.
    const single = connectDatabase(test.url, { max: 1 });
    try {
      const guildId = `g-${randomUUID()}`;
      const first = await loadGuild(single.db, guildId, { startingCredits: 100 });
      expect(first).toMatchObject({ id: guildId, balance: 100, dailyCap: null, queued: null });
      await single.db.execute(sql`insert into guild_role_limits (guild_id, role_id, daily_cap) values (${guildId}, 'role-a', 7)`);
      const withRoles = await loadGuild(single.db, guildId, { startingCredits: 100, roleIds: ['role-a', 'role-b'], queuedKinds: ['song', 'persona_song'] });
      expect(withRoles).toMatchObject({ dailyCap: 7, queued: { kinds: ['song', 'persona_song'], count: 0 } });

      await reserveForJob(single.db, { guildId, jobId: randomUUID(), userId: 'u', amount: 8 });
      const reopened = await loadGuild(single.db, guildId, { startingCredits: 100, roleIds: ['role-b'], queuedKinds: ['lyrics'] });
      expect(reopened).toMatchObject({ balance: 92, dailyCap: null, queued: { kinds: ['lyrics'], count: 0 } });

      const { rows } = await single.pool.query<{ name: string; statement: string }>('select name, statement from pg_prepared_statements order by name');
      expect(rows.filter((row) => row.name === 'open_guild')).toHaveLength(1);
      expect(rows.filter((row) => row.name.startsWith('move_'))).toEqual([]);
    } finally {
      await single.close();
    }
  });

  it('the reservation paying for a job is prepared once per connection, whatever its values', async () => {
    const single = connectDatabase(test.url, { max: 1 });
    try {
      const guildId = `g-${randomUUID()}`;
      await loadGuild(single.db, guildId, { startingCredits: 100 });
      for (const [userId, amount] of [['u1', 5], ['u2', 7], ['u1', 9]] as const) {
        const jobId = randomUUID();
        const alongside = { table: jobs, values: { id: jobId, guildId, channelId: 'c', userId, kind: 'song' as const, request: { kind: 'song', prompt: 'x' }, cost: amount, webhookSecret: 's' } };
        expect(await reserveForJob(single.db, { guildId, jobId, userId, amount, alongside })).toMatchObject({ ok: true, replayed: false, alongside: { id: jobId } });
      }
      const { rows } = await single.pool.query<{ name: string; statement: string; calls: string }>(
        "select name, statement, generic_plans as calls from pg_prepared_statements where name like 'move\\_%' order by name",
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]!.statement).toContain('insert into credit_ledger');
      // Planned once, and that plan used three times.
      expect(Number(rows[0]!.calls)).toBe(3);
      const { rows: setting } = await single.pool.query<{ mode: string }>("select current_setting('plan_cache_mode') as mode");
      expect(setting).toEqual([{ mode: 'force_generic_plan' }]);
    } finally {
      await single.close();
    }
  });
});
