/**
 * Every spending command runs two statements: the guild's read and the reservation. Both are
 * named, so Postgres parses and plans each once per connection (issue 12). Checked on the
 * server: its list of the connection's prepared statements, after commands with different
 * roles, kinds and requesters, holds exactly one of each.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { reserveForJob } from '../../../src/credits/index.js';
import { connectDatabase } from '../../../src/db/client.js';
import { openGuild } from '../../../src/guilds/settings.js';
import { createTestDatabase } from '../../support/database.js';

const test = await createTestDatabase();

describe('named statements', () => {
  it('the guild read and the reservation are each prepared once per connection, whatever their values', async () => {
    // One connection, so that every statement below meets the same prepared list.
    const single = connectDatabase(test.url, { max: 1 });
    try {
      const guildId = `g-${randomUUID()}`;
      const first = await openGuild(single.db, guildId, { startingCredits: 100 });
      expect(first).toMatchObject({ id: guildId, balance: 100, roleDailyCap: null, queued: null });
      await single.db.execute(sql`insert into guild_role_limits (guild_id, role_id, daily_cap) values (${guildId}, 'role-a', 7)`);
      const withRoles = await openGuild(single.db, guildId, { startingCredits: 100, roleIds: ['role-a', 'role-b'], queuedKinds: ['song', 'persona_song'] });
      expect(withRoles).toMatchObject({ roleDailyCap: 7, queued: { kinds: ['song', 'persona_song'], count: 0 } });

      for (const amount of [3, 5]) {
        const reserved = await reserveForJob(single.db, { guildId, jobId: randomUUID(), userId: `u-${amount}`, amount });
        expect(reserved.ok).toBe(true);
      }
      const reopened = await openGuild(single.db, guildId, { startingCredits: 100, roleIds: ['role-b'], queuedKinds: ['lyrics'] });
      expect(reopened).toMatchObject({ balance: 92, roleDailyCap: null, queued: { kinds: ['lyrics'], count: 0 } });

      const { rows } = await single.pool.query<{ name: string; statement: string }>('select name, statement from pg_prepared_statements order by name');
      const reads = rows.filter((row) => row.name === 'open_guild');
      // A reservation spends (`balance >=`) and is refused in a frozen guild; the first credits, granted when the guild row was made, are another movement.
      const reservations = rows.filter((row) => /^\s*with locked as/.test(row.statement) && row.statement.includes('and balance >=') && row.statement.includes('and frozen = false'));
      expect(reads).toHaveLength(1);
      expect(reservations).toHaveLength(1);
      expect(reservations[0]!.name).toMatch(/^s_[0-9a-f]{20}$/);
    } finally {
      await single.close();
    }
  });
});
