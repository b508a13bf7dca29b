import { describe, expect, it } from 'vitest';
import { hasHashTag, loadConfig } from '../../src/config.js';
import { COMPLETE_ENV, problemsOf } from '../support/config-env.js';

const complete = COMPLETE_ENV;

/** The problems of the complete environment with `env` on top. */
const problemsWith = (env: Record<string, string | undefined>) => problemsOf({ ...complete, ...env });

describe('how Redis is asked for', () => {
  it('is an embedded server by default, and one server with REDIS_URL', () => {
    expect(loadConfig({ env: complete }).redis).toBeUndefined();
    expect(loadConfig({ env: { ...complete, REDIS_URL: 'redis://cache:6379/2' } }).redis).toEqual({ mode: 'single', url: 'redis://cache:6379/2', password: undefined });
  });

  it('reads the sentinels and the primary’s name from REDIS_SENTINELS and REDIS_SENTINEL_NAME', () => {
    const config = loadConfig({
      env: { ...complete, REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2:26380,[::1]:26381', REDIS_SENTINEL_NAME: 'mymaster', REDIS_PASSWORD: 'data-pw', REDIS_SENTINEL_PASSWORD: 'sentinel-pw' },
    });
    expect(config.redis).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      name: 'mymaster',
      db: 0,
      password: 'data-pw',
      sentinelPassword: 'sentinel-pw',
    });
  });

  it('reads the same from a redis+sentinel:// REDIS_URL, credentials and database included', () => {
    const config = loadConfig({ env: { ...complete, REDIS_URL: 'redis+sentinel://bot:p%40ss@s1:26379,s2:26379/mymaster/3?sentinelPassword=sp' } });
    expect(config.redis).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      name: 'mymaster',
      db: 3,
      username: 'bot',
      password: 'p@ss',
      sentinelPassword: 'sp',
    });
  });

  it('reads a cluster from REDIS_CLUSTER_NODES or a redis+cluster:// REDIS_URL', () => {
    const nodes = [
      { host: 'n1', port: 7000 },
      { host: 'n2', port: 7001 },
    ];
    expect(loadConfig({ env: { ...complete, REDIS_CLUSTER_NODES: 'n1:7000,n2:7001', QUEUE_PREFIX: '{musicbot}' } }).redis).toEqual({ mode: 'cluster', nodes, password: undefined });
    expect(loadConfig({ env: { ...complete, REDIS_URL: 'redis+cluster://:pw@n1:7000,n2:7001', QUEUE_PREFIX: 'bot-{musicbot}' } }).redis).toEqual({
      mode: 'cluster',
      nodes,
      username: undefined,
      password: 'pw',
    });
  });

  it('refuses, in one line, a queue prefix without a hash tag on a cluster', () => {
    expect(problemsWith({ REDIS_CLUSTER_NODES: 'n1:7000' })).toEqual([
      'QUEUE_PREFIX: expected a hash tag such as {musicbot} on a Redis Cluster, so that each queue\'s keys stay in one slot; "musicbot" has none',
    ]);
    expect(problemsWith({ REDIS_URL: 'redis+cluster://n1:7000', QUEUE_PREFIX: 'bot' })).toHaveLength(1);
    // Off a cluster the default stays as it was: existing deployments keep their queues.
    expect(loadConfig({ env: complete }).queuePrefix).toBe('musicbot');
  });

  it('accepts one hash tag in QUEUE_PREFIX, and nothing else in braces', () => {
    expect(loadConfig({ env: { ...complete, QUEUE_PREFIX: '{musicbot}' } }).queuePrefix).toBe('{musicbot}');
    expect(loadConfig({ env: { ...complete, QUEUE_PREFIX: 'eu-{musicbot}-1' } }).queuePrefix).toBe('eu-{musicbot}-1');
    for (const prefix of ['{}', '{a}{b}', 'a{b', 'a}b', '{a:b}', 'bad prefix']) expect(problemsWith({ QUEUE_PREFIX: prefix })[0]).toMatch(/^QUEUE_PREFIX: expected/);
    expect(hasHashTag('{musicbot}')).toBe(true);
    expect(hasHashTag('musicbot')).toBe(false);
  });

  it('names what is missing or doubled, and each malformed address', () => {
    expect(problemsWith({ REDIS_SENTINELS: 's1:26379' })).toEqual([expect.stringMatching(/^REDIS_SENTINEL_NAME is not set: .*mymaster/)]);
    expect(problemsWith({ REDIS_SENTINEL_NAME: 'mymaster' })).toEqual([expect.stringMatching(/^REDIS_SENTINEL_NAME: expected REDIS_SENTINELS/)]);
    expect(problemsWith({ REDIS_URL: 'redis://x:6379', REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'm' })).toEqual([expect.stringMatching(/^REDIS_SENTINELS: expected one way to reach Redis/)]);
    expect(problemsWith({ REDIS_SENTINELS: 's1', REDIS_SENTINEL_NAME: 'm' })[0]).toMatch(/^REDIS_SENTINELS: expected a list of host:port/);
    expect(problemsWith({ REDIS_CLUSTER_NODES: 'n1:99999' })[0]).toMatch(/^REDIS_CLUSTER_NODES: expected a list of host:port/);
    expect(problemsWith({ REDIS_URL: 'redis+sentinel://s1:26379' })[0]).toMatch(/^REDIS_URL: expected redis\+sentinel:/);
    expect(problemsWith({ REDIS_URL: 'redis+cluster://n1:7000/mymaster' })[0]).toMatch(/^REDIS_URL: expected/);
  });

  it('never repeats a password in a problem', () => {
    const problems = problemsWith({ REDIS_URL: 'redis+sentinel://:hunter2-secret@s1/mymaster', REDIS_PASSWORD: 'x'.repeat(3) });
    expect(problems).toHaveLength(1);
    expect(problems.join('\n')).not.toContain('hunter2-secret');
  });
});
