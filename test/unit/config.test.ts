import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig, modelListNotice, SPEC_MODEL_LIST } from '../../src/config.js';
import { MAX_PUBLIC_URL_LENGTH, webhookUrlFor } from '../../src/webhook-address.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../../src/music-api-spec.js';
import { COMPLETE_ENV, problemsOf } from '../support/config-env.js';

const complete = COMPLETE_ENV;


describe('loadConfig', () => {
  it('applies the documented defaults to a minimal environment', () => {
    const config = loadConfig({ env: complete });
    expect(config.discordApiUrl).toBe('https://discord.com/api');
    expect(config.musicApiUrl).toBe('https://api.example.com');
    expect(config.musicModels).toEqual([...SPEC_MODEL_LIST]);
    expect(config.dataDir).toBe('./data');
    expect(config.httpPort).toBe(8080);
    expect(config.logLevel).toBe('info');
    expect(config.role).toBe('all');
    expect(config.publicUrl).toBeUndefined();
    expect(config.databaseUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.musicModels)).toBe(true);
  });

  it('names each missing required variable on its own line', () => {
    const problems = problemsOf({ MUSIC_API_URL: 'https://api.example.com', MUSIC_API_KEY: 'k' });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^DISCORD_TOKEN is not set/);
    expect(problems[1]).toMatch(/^DISCORD_APPLICATION_ID is not set/);
  });

  it('names a malformed value and what it should look like', () => {
    const problems = problemsOf({ ...complete, MUSIC_API_URL: 'not a url', HTTP_PORT: '99999', LOG_LEVEL: 'loud' });
    expect(problems.find((p) => p.startsWith('MUSIC_API_URL'))).toMatch(/URL/);
    expect(problems.find((p) => p.startsWith('HTTP_PORT'))).toMatch(/port/);
    expect(problems.find((p) => p.startsWith('LOG_LEVEL'))).toMatch(/debug/);
    expect(problems).toHaveLength(3);
  });

  it('refuses a PUBLIC_URL that is not HTTPS, because the service only calls HTTPS webhooks', () => {
    expect(problemsOf({ ...complete, PUBLIC_URL: 'http://bot.example.com' })[0]).toMatch(/^PUBLIC_URL: .*https/);
    expect(problemsOf({ ...complete, PUBLIC_URL: 'http://127.0.0.1.example.com' })[0]).toMatch(/^PUBLIC_URL/);
    expect(loadConfig({ env: { ...complete, PUBLIC_URL: 'http://127.0.0.1:8080' } }).publicUrl).toBe('http://127.0.0.1:8080');
    expect(loadConfig({ env: { ...complete, PUBLIC_URL: 'https://bot.example.com/' } }).publicUrl).toBe(
      'https://bot.example.com',
    );
  });

  it("refuses, in one line, a PUBLIC_URL whose webhook addresses would pass the service's 1024 characters", () => {
    const base = 'https://bot.example.com/';
    const publicUrl = (length: number) => `${base}${'a'.repeat(length - base.length)}`;
    const longest = publicUrl(MAX_PUBLIC_URL_LENGTH);
    const config = loadConfig({ env: { ...complete, PUBLIC_URL: longest } });
    expect(webhookUrlFor(config.publicUrl!, randomUUID())).toHaveLength(MAX_WEBHOOK_URL_LENGTH);
    const problems = problemsOf({ ...complete, PUBLIC_URL: publicUrl(MAX_PUBLIC_URL_LENGTH + 1) });
    expect(problems).toEqual([expect.stringMatching(/^PUBLIC_URL: expected at most 972 characters: .* would be 1025, .* at most 1024$/)]);
  });

  it("has a one-line notice when the spec's placeholder models would be offered to a service that is not local", () => {
    const notice = modelListNotice(loadConfig({ env: complete }));
    expect(notice).toMatch(/^MUSIC_MODELS is not set, so the spec's model names are offered \(ModelA 3 Pro, ModelA 3 preview, .*, ModelB-0\.8\); .* https:\/\/api\.example\.com .*: set MUSIC_MODELS to its real model names$/);
    expect(notice).not.toContain('\n');
    expect(modelListNotice(loadConfig({ env: { ...complete, MUSIC_MODELS: 'FUZZ-2.0' } }))).toBeUndefined();
    // The spec's names spelled out in full are still the operator's choice.
    expect(modelListNotice(loadConfig({ env: { ...complete, MUSIC_MODELS: SPEC_MODEL_LIST.join(',') } }))).toBeUndefined();
    for (const local of ['http://127.0.0.1:4010', 'http://localhost:4010', 'http://[::1]:4010']) {
      expect(modelListNotice(loadConfig({ env: { ...complete, MUSIC_API_URL: local } })), local).toBeUndefined();
    }
    expect(modelListNotice(loadConfig({ env: { ...complete, MUSIC_API_URL: 'https://127.0.0.1.example.com' } }))).toBeDefined();
  });

  it('reads MUSIC_MODELS and BOT_OWNER_IDS as comma-separated lists', () => {
    const config = loadConfig({
      env: { ...complete, MUSIC_MODELS: 'FUZZ-2.0, FUZZ-2.0 Pro ,Lyria 3 Pro', BOT_OWNER_IDS: '123456789012345678' },
    });
    expect(config.musicModels).toEqual(['FUZZ-2.0', 'FUZZ-2.0 Pro', 'Lyria 3 Pro']);
    expect(config.botOwnerIds).toEqual(['123456789012345678']);
    expect(problemsOf({ ...complete, BOT_OWNER_IDS: 'alice' })[0]).toMatch(/^BOT_OWNER_IDS/);
  });

  it('treats blank values as unset', () => {
    const config = loadConfig({ env: { ...complete, DATABASE_URL: '', HTTP_PORT: ' ' } });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.httpPort).toBe(8080);
  });

  it('lets a script require only the parts it uses', () => {
    expect(problemsOf({}, [])).toEqual([]);
    expect(problemsOf({ MUSIC_API_URL: 'https://a.example', MUSIC_API_KEY: 'k' }, ['musicApi'])).toEqual([]);
  });

  it('never repeats a secret value in its messages', () => {
    const problems = problemsOf({ ...complete, DISCORD_TOKEN: 'short-secret' });
    expect(problems.join('\n')).not.toContain('short-secret');
  });
});

describe('pipeline timing variables', () => {
  it('reads per-kind expected durations and poll intervals', () => {
    const config = loadConfig({ env: { ...complete, EXPECTED_SECONDS: 'song=40, voice=90', POLL_INTERVAL_MIN_MS: '200' } });
    expect(config.expectedSeconds).toEqual({ song: 40, voice: 90 });
    expect(config.pollIntervalMs).toEqual({ min: 200, max: 60_000 });
    expect(problemsOf({ ...complete, EXPECTED_SECONDS: 'song:40' })[0]).toMatch(/^EXPECTED_SECONDS: expected a list/);
    expect(problemsOf({ ...complete, EXPECTED_SECONDS: 'dance=4' })[0]).toMatch(/^EXPECTED_SECONDS/);
  });
});

describe('the music account alert variables', () => {
  it('are off unless ACCOUNT_LOW_CREDITS is set, and DM the owners unless a channel is named', () => {
    expect(loadConfig({ env: complete })).toMatchObject({ accountLowCredits: 0, accountAlertChannelId: undefined });
    const config = loadConfig({ env: { ...complete, ACCOUNT_LOW_CREDITS: '500', BOT_OWNER_IDS: '123456789012345678' } });
    expect(config).toMatchObject({ accountLowCredits: 500, accountAlertChannelId: undefined, botOwnerIds: ['123456789012345678'] });
    expect(loadConfig({ env: { ...complete, ACCOUNT_LOW_CREDITS: '500', ACCOUNT_ALERT_CHANNEL_ID: '223456789012345678' } }).accountAlertChannelId).toBe(
      '223456789012345678',
    );
  });

  it('refuse a threshold with nowhere to send the alert, and a channel that is not an id', () => {
    expect(problemsOf({ ...complete, ACCOUNT_LOW_CREDITS: '500' })).toEqual([
      'ACCOUNT_LOW_CREDITS: expected somewhere to send the alert: ACCOUNT_ALERT_CHANNEL_ID, or BOT_OWNER_IDS for direct messages',
    ]);
    expect(problemsOf({ ...complete, ACCOUNT_LOW_CREDITS: '-1' })).toEqual(['ACCOUNT_LOW_CREDITS: expected a number of 0 or more']);
    expect(problemsOf({ ...complete, ACCOUNT_ALERT_CHANNEL_ID: '#ops' })).toEqual(['ACCOUNT_ALERT_CHANNEL_ID: expected a Discord id (17 to 20 digits)']);
  });
});

describe('the moderation service variables', () => {
  it('are off unless MODERATION_URL is set, and then wait 2 s and refuse when it is down', () => {
    expect(loadConfig({ env: complete }).moderation).toBeUndefined();
    const config = loadConfig({ env: { ...complete, MODERATION_URL: 'https://api.openai.com/v1/moderations/', MODERATION_API_KEY: 'sk-moderation' } });
    expect(config.moderation).toEqual({ url: 'https://api.openai.com/v1/moderations', apiKey: 'sk-moderation', timeoutMs: 2_000, whenDown: 'refuse' });
    expect(Object.isFrozen(config.moderation)).toBe(true);
    const allowing = loadConfig({ env: { ...complete, MODERATION_URL: 'http://127.0.0.1:9000/check', MODERATION_TIMEOUT_MS: '500', MODERATION_WHEN_DOWN: 'allow' } });
    expect(allowing.moderation).toEqual({ url: 'http://127.0.0.1:9000/check', apiKey: undefined, timeoutMs: 500, whenDown: 'allow' });
  });

  it('refuse a policy other than refuse or allow, an address that is not one, and a key without an address, never repeating the key', () => {
    expect(problemsOf({ ...complete, MODERATION_URL: 'https://m.example/v1/moderations', MODERATION_WHEN_DOWN: 'ignore' })).toEqual(['MODERATION_WHEN_DOWN: expected one of refuse, allow']);
    expect(problemsOf({ ...complete, MODERATION_URL: 'moderation.example' })[0]).toMatch(/^MODERATION_URL: expected an absolute URL/);
    const problems = problemsOf({ ...complete, MODERATION_API_KEY: 'sk-secret-moderation' });
    expect(problems).toEqual(['MODERATION_URL is not set: MODERATION_API_KEY is the key of a moderation service, such as https://api.openai.com/v1/moderations']);
    expect(problems.join('\n')).not.toContain('sk-secret-moderation');
  });
});

describe('deployment variables', () => {
  it('default to 20 connections a pool, a migration at start, and metrics on every interface of METRICS_PORT', () => {
    expect(loadConfig({ env: complete })).toMatchObject({ databasePoolSize: 20, migrateOnStart: true, metricsHost: '0.0.0.0', metricsPort: undefined });
  });

  it('read a pool size, a migration left to a one-shot service, and a private metrics address', () => {
    const config = loadConfig({ env: { ...complete, DATABASE_POOL_SIZE: '8', MIGRATE_ON_START: 'false', METRICS_PORT: '9100', METRICS_HOST: '127.0.0.1' } });
    expect(config).toMatchObject({ databasePoolSize: 8, migrateOnStart: false, metricsPort: 9100, metricsHost: '127.0.0.1' });
  });

  it('refuse a pool of no connections', () => {
    expect(problemsOf({ ...complete, DATABASE_POOL_SIZE: '0' })).toEqual([expect.stringContaining('DATABASE_POOL_SIZE')]);
  });

  it('default the limits on Postgres, the drain and the liveness stall, and read each (0: no Postgres limit)', () => {
    expect(loadConfig({ env: complete })).toMatchObject({
      databaseStatementTimeoutMs: 60_000,
      databaseConnectTimeoutMs: 5_000,
      migrationLockTimeoutMs: 10_000,
      shutdownDrainMs: 5_000,
      livezStallMs: 5_000,
    });
    const env = { DATABASE_STATEMENT_TIMEOUT_MS: '0', DATABASE_CONNECT_TIMEOUT_MS: '2000', MIGRATION_LOCK_TIMEOUT_MS: '0', SHUTDOWN_DRAIN_MS: '0', LIVEZ_STALL_MS: '2500' };
    expect(loadConfig({ env: { ...complete, ...env } })).toMatchObject({
      databaseStatementTimeoutMs: 0,
      databaseConnectTimeoutMs: 2_000,
      migrationLockTimeoutMs: 0,
      shutdownDrainMs: 0,
      livezStallMs: 2_500,
    });
  });

  it('refuse a drain over 20 s, or one that leaves a stop under 2 s of its limit for the rest', () => {
    expect(problemsOf({ ...complete, SHUTDOWN_DRAIN_MS: '25000' })).toEqual(['SHUTDOWN_DRAIN_MS: expected at most 20000']);
    expect(problemsOf({ ...complete, SHUTDOWN_LIMIT_MS: '8000', SHUTDOWN_DRAIN_MS: '7000' })).toEqual([
      'SHUTDOWN_DRAIN_MS: expected at most 6000, 2 s under SHUTDOWN_LIMIT_MS (8000): the parts stop after the drain, within the limit',
    ]);
    expect(loadConfig({ env: { ...complete, SHUTDOWN_LIMIT_MS: '8000' } })).toMatchObject({ shutdownLimitMs: 8_000, shutdownDrainMs: 5_000 });
    expect(problemsOf({ ...complete, SHUTDOWN_LIMIT_MS: '4000', SHUTDOWN_DRAIN_MS: '0' })).toEqual(['SHUTDOWN_LIMIT_MS: expected at least 5000']);
  });
});

describe('shard variables', () => {
  it('leave the count to Discord and run every shard when unset', () => {
    const config = loadConfig({ env: complete });
    expect(config.shardCount).toBeUndefined();
    expect(config.shardIds).toBeUndefined();
  });

  it('read SHARD_IDS as ids and ranges, sorted, each once', () => {
    expect(loadConfig({ env: { ...complete, SHARD_IDS: '0,1' } }).shardIds).toEqual([0, 1]);
    expect(loadConfig({ env: { ...complete, SHARD_IDS: '0-3' } }).shardIds).toEqual([0, 1, 2, 3]);
    expect(loadConfig({ env: { ...complete, SHARD_IDS: ' 7, 0-2 ,1 ' } }).shardIds).toEqual([0, 1, 2, 7]);
    expect(loadConfig({ env: { ...complete, SHARD_COUNT: '8', SHARD_IDS: '4-7' } })).toMatchObject({ shardCount: 8, shardIds: [4, 5, 6, 7] });
  });

  it('refuse ids that are not ids, a range from high to low, and ids beyond SHARD_COUNT', () => {
    expect(problemsOf({ ...complete, SHARD_IDS: 'first' })).toEqual(['SHARD_IDS: expected shard ids such as 0,1 or 0-3']);
    expect(problemsOf({ ...complete, SHARD_IDS: '3-1' })).toEqual(['SHARD_IDS: expected shard ids such as 0,1 or 0-3 (a range from low to high)']);
    expect(problemsOf({ ...complete, SHARD_COUNT: '2', SHARD_IDS: '1-2' })).toEqual(['SHARD_IDS: expected ids below SHARD_COUNT (2), from 0 to 1']);
    expect(problemsOf({ ...complete, SHARD_COUNT: '0' })).toEqual(['SHARD_COUNT: expected a number above 0']);
  });

  it('give a disconnected shard 60 s before /readyz fails, or GATEWAY_READY_GRACE_MS', () => {
    expect(loadConfig({ env: complete }).gatewayReadyGraceMs).toBe(60_000);
    expect(loadConfig({ env: { ...complete, GATEWAY_READY_GRACE_MS: '5000' } }).gatewayReadyGraceMs).toBe(5_000);
    expect(problemsOf({ ...complete, GATEWAY_READY_GRACE_MS: '-1' })).toEqual(['GATEWAY_READY_GRACE_MS: expected a number of 0 or more']);
  });

  it("write the shards' heartbeat every 10 s, or GATEWAY_HEARTBEAT_MS; hold a guild's player 15 s and a queue entry 30 s unrenewed, or VOICE_LEASE_MS and QUEUE_LOCK_MS", () => {
    expect(loadConfig({ env: complete })).toMatchObject({ gatewayHeartbeatMs: 10_000, voiceLeaseMs: 15_000, queueLockMs: 30_000 });
    const short = { ...complete, GATEWAY_HEARTBEAT_MS: '2000', VOICE_LEASE_MS: '3000', QUEUE_LOCK_MS: '10000' };
    expect(loadConfig({ env: short })).toMatchObject({ gatewayHeartbeatMs: 2_000, voiceLeaseMs: 3_000, queueLockMs: 10_000 });
    expect(problemsOf({ ...complete, GATEWAY_HEARTBEAT_MS: '500', VOICE_LEASE_MS: '1000', QUEUE_LOCK_MS: '1000' })).toEqual([
      'GATEWAY_HEARTBEAT_MS: expected at least 1000',
      'QUEUE_LOCK_MS: expected at least 5000: a busy worker renews its locks every half of it',
      'VOICE_LEASE_MS: expected at least 3000: it is renewed every third of it, at most once a second',
    ]);
  });
});

describe('what the bot sells', () => {
  const pack = '1234567890123456789';
  const bigPack = '1234567890123456790';
  const plan = '1234567890123456791';

  it('sells nothing unless told, and reads <sku_id>:<credits> lists', () => {
    expect(loadConfig({ env: complete })).toMatchObject({ creditPacks: [], subscriptionAllowances: [], packClaimMinutes: 10, entitlementCheckSeconds: 3_600 });
    const config = loadConfig({ env: { ...complete, CREDIT_PACKS: ` ${pack}:100, ${bigPack} : 500 `, SUBSCRIPTION_ALLOWANCES: `${plan}:2000`, PACK_CLAIM_MINUTES: '0' } });
    expect(config.creditPacks).toEqual([
      { skuId: pack, credits: 100 },
      { skuId: bigPack, credits: 500 },
    ]);
    expect(config.subscriptionAllowances).toEqual([{ skuId: plan, credits: 2000 }]);
    expect(config.packClaimMinutes).toBe(0);
  });

  it('refuses a list it cannot read, a pack of 0 credits, a SKU twice, and a SKU both a pack and a subscription', () => {
    expect(problemsOf({ ...complete, CREDIT_PACKS: '100 credits' })).toEqual([
      'CREDIT_PACKS: expected a list such as 1234567890123456789:100,… (a SKU id from the developer portal, a colon, its credits)',
    ]);
    expect(problemsOf({ ...complete, CREDIT_PACKS: `${pack}:0` })).toEqual(['CREDIT_PACKS: expected credits above 0 for every SKU of CREDIT_PACKS']);
    expect(problemsOf({ ...complete, CREDIT_PACKS: `${pack}:100,${pack}:200` })).toEqual(['CREDIT_PACKS: expected each SKU once']);
    expect(problemsOf({ ...complete, CREDIT_PACKS: `${pack}:100`, SUBSCRIPTION_ALLOWANCES: `${pack}:500` })).toEqual([
      `SUBSCRIPTION_ALLOWANCES: expected SKUs other than CREDIT_PACKS' (${pack} is in both)`,
    ]);
    expect(problemsOf({ ...complete, ENTITLEMENT_CHECK_SECONDS: '0' })).toEqual(['ENTITLEMENT_CHECK_SECONDS: expected a number above 0']);
  });
});

describe('interaction variables', () => {
  const key = 'AB'.repeat(32);

  it('take interactions from the gateway unless told, and need no public key then', () => {
    expect(loadConfig({ env: complete })).toMatchObject({ interactions: 'gateway', discordPublicKey: undefined });
  });

  it('read INTERACTIONS=http with the public key, in lower case', () => {
    expect(loadConfig({ env: { ...complete, INTERACTIONS: 'http', DISCORD_PUBLIC_KEY: ` ${key} ` } })).toMatchObject({
      interactions: 'http',
      discordPublicKey: key.toLowerCase(),
    });
  });

  it('refuse INTERACTIONS=http without a public key, a key that is not one, and another mode', () => {
    expect(problemsOf({ ...complete, INTERACTIONS: 'http' })).toEqual([
      "DISCORD_PUBLIC_KEY is not set: INTERACTIONS=http needs the application's public key from the developer portal (64 hexadecimal characters)",
    ]);
    expect(problemsOf({ ...complete, INTERACTIONS: 'http', DISCORD_PUBLIC_KEY: 'xyz' })).toEqual([
      "DISCORD_PUBLIC_KEY: expected the application's public key from the developer portal (64 hexadecimal characters)",
    ]);
    expect(problemsOf({ ...complete, INTERACTIONS: 'webhook' })).toEqual(['INTERACTIONS: expected one of gateway, http']);
  });
});

describe('METRICS_TOKEN', () => {
  it('is unset unless given, and read as given', () => {
    expect(loadConfig({ env: complete }).metricsToken).toBeUndefined();
    expect(loadConfig({ env: { ...complete, METRICS_TOKEN: 'a'.repeat(16) } }).metricsToken).toBe('a'.repeat(16));
  });

  it('refuses a short token and one with spaces, without quoting it', () => {
    for (const token of ['short', 'has a space in the middle']) {
      const problems = problemsOf({ ...complete, METRICS_TOKEN: token });
      expect(problems).toEqual(['METRICS_TOKEN: expected a secret of at least 16 printable characters without spaces, such as the output of openssl rand -hex 32']);
      expect(problems.join('\n')).not.toContain(token);
    }
  });
});
