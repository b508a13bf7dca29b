/**
 * The checks of a request's texts beyond the blocklist, with the bot pointed at the
 * simulator's moderation stand-in (MODERATION_URL): a flagged request is refused privately
 * before anything is reserved or sent to the music service, with the categories for
 * moderators only; when the service cannot answer, the request is refused with "try again"
 * (MODERATION_WHEN_DOWN=refuse) or let through with a warning (allow). The service's key is
 * never written to a log line.
 */
import { and, count, desc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MODERATION_KEY } from '@music-bot/test-world';
import { MODERATION_PATH } from '@music-bot/music-api-sim';
import { loadGuild } from '../../../src/guilds/settings.js';
import { auditLog, guilds, jobs } from '../../../src/db/schema.js';
import { createPipeline } from '../../../src/pipeline/create-pipeline.js';
import { jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

const FLAGGED = 'This server’s content check did not allow this request. Nothing was spent.';
const UNAVAILABLE = 'The content check this server uses isn’t answering right now, so nothing was made. Try again in a moment; nothing was spent.';

let h: BotHarness;
let g: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 100, env: (stack) => ({ ...stack.world.moderationEnv, MODERATION_TIMEOUT_MS: '500' }) });
});
afterAll(async () => h?.close());
beforeEach(() => {
  g = h.inNewGuild();
  h.sim.setModeration({}, { reset: true });
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

/** What a refusal must leave as it was: the balance, the guild's jobs, and the service's tasks. */
async function accounts() {
  await g.balance();
  const [guild] = await g.db.db.select({ balance: guilds.balance }).from(guilds).where(eq(guilds.id, g.guild.id));
  const [jobCount] = await g.db.db.select({ n: count() }).from(jobs).where(eq(jobs.guildId, g.guild.id));
  return { balance: guild?.balance, jobs: jobCount?.n, tasks: g.sim.listTasks().length };
}

async function audits(action: string) {
  return g.db.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.guildId, g.guild.id), eq(auditLog.action, action)))
    .orderBy(desc(auditLog.id));
}

const moderationRequests = () => h.sim.requests.filter((request) => request.path === MODERATION_PATH);
const checks = async (outcome: string) => {
  const metric = await h.app.deps.metrics.moderationChecks.get();
  return metric.values.find((value) => value.labels['outcome'] === outcome)?.value ?? 0;
};

describe('the moderation service', () => {
  it('refuses a flagged request privately, reserving nothing and sending nothing upstream; moderators see the categories', async () => {
    h.sim.setModeration({ flag: { violence: ['crush them all'], harassment: ['you fools'] } });
    const before = await accounts();
    const asked = moderationRequests().length;
    const answer = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'a march', lyrics: 'we will crush them all', title: 'Anthem' } }));
    expect(answer.ephemeral).toBe(true);
    expect(answer.content).toBe(FLAGGED);
    expect(await accounts()).toEqual(before);

    // One request with every text the member wrote, and the right key.
    expect(moderationRequests().slice(asked)).toMatchObject([{ authorized: true, body: { input: ['a march', 'we will crush them all', 'Anthem'] } }]);
    const [refused] = await audits('request_refused_moderation');
    expect(refused).toMatchObject({ actorId: g.members.alice, details: { kind: 'song', fields: ['lyrics'], categories: ['violence'] } });
    expect(JSON.stringify(refused)).not.toContain('crush');
    expect(await checks('flagged')).toBeGreaterThan(0);

    // A clean request goes on, checked too.
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'a gentle tune' } }))));
    expect(moderationRequests().at(-1)).toMatchObject({ body: { input: ['a gentle tune'] } });
  });

  it('when it is down, slow or answers nonsense, refuses with "try again" at no cost (MODERATION_WHEN_DOWN=refuse)', async () => {
    const before = await accounts();
    const refusedBefore = await checks('down_refused');
    for (const mode of ['down', 'malformed', 'slow'] as const) {
      h.sim.setModeration({ mode, slowMs: 5_000 });
      const answer = await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: `while it is ${mode}` } }));
      expect(answer.ephemeral, mode).toBe(true);
      expect(answer.content, mode).toBe(UNAVAILABLE);
    }
    expect(await accounts()).toEqual(before);
    expect(await checks('down_refused')).toBe(refusedBefore + 3);
    expect(h.logs.filter((line) => line['msg'] === 'moderation service unavailable: request refused (MODERATION_WHEN_DOWN=refuse)').map((line) => line['why'])).toEqual(
      expect.arrayContaining(['status 503', 'malformed', 'timeout']),
    );

    h.sim.setModeration({ mode: 'up' });
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'it is back' } }))));
  });

  it('when it is down and the policy is allow, lets the request through with a warning and a count', async () => {
    h.sim.setModeration({ mode: 'down' });
    const { deps } = h.app;
    const allowing = createPipeline({ ...deps, moderation: { service: deps.moderation!.service, whenDown: 'allow' } }, (guildId, options) =>
      loadGuild(deps.db, guildId, { ...options, startingCredits: 100 }),
    );
    const allowedBefore = await checks('down_allowed');
    const accepted = await allowing.submit({
      requester: { guildId: g.guild.id, channelId: g.channelId, userId: g.members.alice },
      request: { kind: 'lyrics', prompt: 'unchecked but allowed' },
    });
    expect(accepted.cost).toBeGreaterThan(0);
    expect(await checks('down_allowed')).toBe(allowedBefore + 1);
    expect(h.logs.some((line) => line['msg'] === 'moderation service unavailable: request allowed unchecked (MODERATION_WHEN_DOWN=allow)' && line['guildId'] === g.guild.id)).toBe(true);
  });

  it('never writes its key to a log line', async () => {
    h.sim.setModeration({ mode: 'down' });
    await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'look for the key' } }));
    expect(moderationRequests().length).toBeGreaterThan(0);
    expect(h.rawLogs.join('\n')).not.toContain(MODERATION_KEY);
  });
});
