/**
 * Every command starts with the guild's read: one named statement, whatever the member's roles
 * and the kinds counted, so Postgres parses and plans it once per connection.
 * Checked on the server: its list of the connection's prepared statements, after reads with
 * different roles and kinds, holds it once. (The reservation is not named: measured under 50
 * clients on one guild, its generic plan took the guild's row for longer, 3,000 against 7,500
 * reservations a second.)
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
  it('the guild read is prepared once per connection, whatever its values', async () => {
    // One connection, so that every statement below meets the same prepared list.
    const single = connectDatabase(test.url, { max: 1 });
    try {
      const guildId = `g-${randomUUID()}`;
      const first = await openGuild(single.db, guildId, { startingCredits: 100 });
      expect(first).toMatchObject({ id: guildId, balance: 100, dailyCap: null, queued: null });
      await single.db.execute(sql`insert into guild_role_limits (guild_id, role_id, daily_cap) values (${guildId}, 'role-a', 7)`);
      const withRoles = await openGuild(single.db, guildId, { startingCredits: 100, roleIds: ['role-a', 'role-b'], queuedKinds: ['song', 'persona_song'] });
      expect(withRoles).toMatchObject({ dailyCap: 7, queued: { kinds: ['song', 'persona_song'], count: 0 } });

      await reserveForJob(single.db, { guildId, jobId: randomUUID(), userId: 'u', amount: 8 });
      const reopened = await openGuild(single.db, guildId, { startingCredits: 100, roleIds: ['role-b'], queuedKinds: ['lyrics'] });
      expect(reopened).toMatchObject({ balance: 92, dailyCap: null, queued: { kinds: ['lyrics'], count: 0 } });

      const { rows } = await single.pool.query<{ name: string; statement: string }>('select name, statement from pg_prepared_statements order by name');
      expect(rows.filter((row) => row.name === 'open_guild')).toHaveLength(1);
    } finally {
      await single.close();
    }
  });
});
