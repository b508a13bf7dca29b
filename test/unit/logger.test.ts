/**
 * A failed query's error holds the statement's values (drizzle puts them in its message and
 * stack): logged, none of them may show, such as a job's webhook secret.
 */
import { Writable } from 'node:stream';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';

function captured() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger({ level: 'info' }, stream), lines };
}

describe('the logger', () => {
  const secret = 'f3b9c0ffee5ecret0123456789abcdef';
  const failed = () => {
    const cause = Object.assign(new Error('duplicate key value violates unique constraint "jobs_pkey"'), { code: '23505' });
    return new DrizzleQueryError('insert into "jobs" ("id", "webhook_secret")\n select $1, $2', ['job-1', secret], cause);
  };

  it("logs a failed query by the driver's words and the statement's first line, never its values", () => {
    const { logger, lines } = captured();
    logger.error({ err: failed(), jobId: 'job-1' }, 'could not record the job');
    logger.warn({ error: failed() }, 'again, under another key');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toContain(secret);
    const logged = JSON.parse(lines[0]!) as { err: Record<string, unknown> };
    expect(logged.err).toMatchObject({
      message: 'query failed: duplicate key value violates unique constraint "jobs_pkey"',
      code: '23505',
      statement: 'insert into "jobs" ("id", "webhook_secret")',
    });
  });

  it('logs any other error as pino does, message and stack', () => {
    const { logger, lines } = captured();
    logger.error({ err: new Error('connect ECONNREFUSED 127.0.0.1:5432') }, 'no database');
    const logged = JSON.parse(lines[0]!) as { err: { message: string; stack: string; type: string } };
    expect(logged.err).toMatchObject({ type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:5432' });
    expect(logged.err.stack).toContain('ECONNREFUSED');
  });
});

describe('loggableError', () => {
  it('gives a failed query without its values, as the logger does', async () => {
    const { loggableError } = await import('../../src/logger.js');
    const secret = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const error = new DrizzleQueryError('select $1', [secret], new Error('canceling statement due to statement timeout'));
    const logged = JSON.stringify(loggableError(error));
    expect(logged).not.toContain(secret);
    expect(logged).toContain('query failed: canceling statement due to statement timeout');
  });

  it("logs the music API's errors in their own form, and not any other error's toJSON", async () => {
    const { loggableError } = await import('../../src/logger.js');
    const { MusicApiError } = await import('../../src/music-api/errors.js');
    const apiError = new MusicApiError({ kind: 'rate_limited', operation: 'createSong', method: 'POST', path: '/api/v1/generate', status: 429 });
    expect(loggableError(apiError)).toMatchObject({ name: 'MusicApiError', kind: 'rate_limited', status: 429 });

    const token = 'interaction-token-0f9e8d7c6b5a';
    class CarriesItsRequest extends Error {
      toJSON() {
        return { message: this.message, url: `https://discord.com/api/webhooks/1/${token}` };
      }
    }
    const logged = JSON.stringify(loggableError(new CarriesItsRequest('a request failed'), [token]));
    expect(logged).toContain('a request failed');
    expect(logged).not.toContain(token);
  });
});
