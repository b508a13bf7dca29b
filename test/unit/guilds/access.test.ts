import { describe, expect, it } from 'vitest';
import type { Executor } from '../../../src/db/client.js';
import { checkPlaceAndRole, cooldownLeft, isModerator, type Member } from '../../../src/guilds/access.js';
import type { GuildRow } from '../../../src/guilds/settings.js';

function guild(overrides: Partial<GuildRow> = {}): GuildRow {
  return {
    id: 'guild-1',
    balance: 100,
    frozen: false,
    monthlyAllowance: 0,
    allowancePeriod: null,
    allowanceFloor: 0,
    userDailyCap: null,
    allowedChannelIds: [],
    requiredRoleId: null,
    moderatorRoleId: null,
    djRoleId: null,
    subscriptionAllowance: 0,
    defaultModel: null,
    cooldownSeconds: 0,
    visibility: 'public',
    alertChannelId: null,
    alertBelow: null,
    alertSentAt: null,
    blocklistVersion: 0,
    reviewChannelId: null,
    useAutomod: false,
    explicitInAgeRestrictedOnly: true,
    automodVersion: 0,
    notifyWhenDone: false,
    createdAt: new Date('2026-01-01T00:00:00Z'),
    updatedAt: new Date('2026-01-01T00:00:00Z'),
    ...overrides,
  };
}

function member(overrides: Partial<Member> = {}): Member {
  return { userId: 'user-1', roleIds: [], canManageGuild: false, ...overrides };
}

describe('isModerator', () => {
  it('counts Manage Server, whatever the roles and the guild settings', () => {
    expect(isModerator(guild(), member({ canManageGuild: true }))).toBe(true);
    expect(isModerator(guild({ moderatorRoleId: 'mods' }), member({ canManageGuild: true }))).toBe(true);
  });

  it('counts the moderator role once the guild names one', () => {
    expect(isModerator(guild({ moderatorRoleId: 'mods' }), member({ roleIds: ['dj', 'mods'] }))).toBe(true);
  });

  it('does not count other roles, nor any role while the guild names none', () => {
    expect(isModerator(guild({ moderatorRoleId: 'mods' }), member({ roleIds: ['dj'] }))).toBe(false);
    expect(isModerator(guild({ moderatorRoleId: 'mods' }), member())).toBe(false);
    expect(isModerator(guild(), member({ roleIds: ['mods'] }))).toBe(false);
  });
});

describe('checkPlaceAndRole', () => {
  const allowed = guild({ allowedChannelIds: ['music', 'requests'] });

  it('lets every member in everywhere while the guild sets no rules', () => {
    expect(checkPlaceAndRole(guild(), { channelId: 'anywhere' }, member())).toBeUndefined();
  });

  it('refuses a channel outside the allowed list and names the allowed ones', () => {
    expect(checkPlaceAndRole(allowed, { channelId: 'general' }, member())).toEqual({
      reason: 'channel_not_allowed',
      allowedChannelIds: ['music', 'requests'],
    });
    expect(checkPlaceAndRole(allowed, { channelId: 'requests' }, member())).toBeUndefined();
  });

  it('allows a thread of an allowed channel, not a thread of another one', () => {
    expect(checkPlaceAndRole(allowed, { channelId: 'thread-1', parentChannelId: 'music' }, member())).toBeUndefined();
    expect(checkPlaceAndRole(allowed, { channelId: 'thread-2', parentChannelId: 'general' }, member())).toMatchObject({
      reason: 'channel_not_allowed',
    });
    expect(checkPlaceAndRole(allowed, { channelId: 'thread-3', parentChannelId: null }, member())).toMatchObject({
      reason: 'channel_not_allowed',
    });
  });

  it('holds moderators to the channel rule too', () => {
    expect(checkPlaceAndRole(allowed, { channelId: 'general' }, member({ canManageGuild: true }))).toMatchObject({
      reason: 'channel_not_allowed',
    });
  });

  it('refuses a member without the required role; holders of the role and moderators pass', () => {
    const withRole = guild({ requiredRoleId: 'dj', moderatorRoleId: 'mods' });
    expect(checkPlaceAndRole(withRole, { channelId: 'music' }, member({ roleIds: ['listener'] }))).toEqual({
      reason: 'missing_role',
      roleId: 'dj',
    });
    expect(checkPlaceAndRole(withRole, { channelId: 'music' }, member({ roleIds: ['dj'] }))).toBeUndefined();
    expect(checkPlaceAndRole(withRole, { channelId: 'music' }, member({ roleIds: ['mods'] }))).toBeUndefined();
    expect(checkPlaceAndRole(withRole, { channelId: 'music' }, member({ canManageGuild: true }))).toBeUndefined();
  });

  it('names the channel first when both rules refuse', () => {
    const both = guild({ allowedChannelIds: ['music'], requiredRoleId: 'dj' });
    expect(checkPlaceAndRole(both, { channelId: 'general' }, member())).toMatchObject({ reason: 'channel_not_allowed' });
  });
});

describe('cooldownLeft', () => {
  const now = new Date('2026-05-01T12:00:00Z');

  /** An executor whose query for the member's last request answers `last`; it counts the queries. */
  function lastRequestAt(last: Date | null) {
    const calls = { queries: 0 };
    const executor = {
      select: () => ({
        from: () => ({
          where: async () => {
            calls.queries += 1;
            return [{ last }];
          },
        }),
      }),
    } as unknown as Executor;
    return { executor, calls };
  }

  it('asks nothing of the database without a cooldown, or for a moderator', async () => {
    const { executor, calls } = lastRequestAt(now);
    expect(await cooldownLeft(executor, guild({ cooldownSeconds: 0 }), member(), now)).toBe(0);
    expect(await cooldownLeft(executor, guild({ cooldownSeconds: -5 }), member(), now)).toBe(0);
    expect(await cooldownLeft(executor, guild({ cooldownSeconds: 60 }), member({ canManageGuild: true }), now)).toBe(0);
    expect(await cooldownLeft(executor, guild({ cooldownSeconds: 60, moderatorRoleId: 'mods' }), member({ roleIds: ['mods'] }), now)).toBe(0);
    expect(calls.queries).toBe(0);
  });

  it('counts the whole seconds left since the last request, rounded up', async () => {
    const cooldown = guild({ cooldownSeconds: 60 });
    const secondsAgo = (seconds: number) => lastRequestAt(new Date(now.getTime() - seconds * 1000)).executor;
    expect(await cooldownLeft(secondsAgo(0), cooldown, member(), now)).toBe(60);
    expect(await cooldownLeft(secondsAgo(10), cooldown, member(), now)).toBe(50);
    expect(await cooldownLeft(secondsAgo(10.2), cooldown, member(), now)).toBe(50);
    expect(await cooldownLeft(secondsAgo(59.9), cooldown, member(), now)).toBe(1);
  });

  it('is 0 once the cooldown has passed, and for a member who never asked', async () => {
    const cooldown = guild({ cooldownSeconds: 60 });
    expect(await cooldownLeft(lastRequestAt(new Date(now.getTime() - 60_000)).executor, cooldown, member(), now)).toBe(0);
    expect(await cooldownLeft(lastRequestAt(new Date(now.getTime() - 3_600_000)).executor, cooldown, member(), now)).toBe(0);
    expect(await cooldownLeft(lastRequestAt(null).executor, cooldown, member(), now)).toBe(0);
  });
});
