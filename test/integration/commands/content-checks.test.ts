/**
 * The checks of a request's texts beyond the blocklist. The explicit list: words a server allows
 * only in age-restricted channels (a thread follows its parent), refused privately elsewhere
 * while the server's setting holds. The moderation service, with the bot pointed at the
 * simulator's moderation stand-in (MODERATION_URL): a flagged request is refused privately
 * before anything is reserved or sent to the music service, with the categories for
 * moderators only; when the service cannot answer, the request is refused with "try again"
 * (MODERATION_WHEN_DOWN=refuse) or let through with a warning (allow). The service's key is
 * never written to a log line.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MODERATION_KEY } from '@music-bot/test-world';
import { MODERATION_PATH } from '@music-bot/music-api-sim';
import { loadGuild } from '../../../src/guilds/settings.js';
import { createPipeline } from '../../../src/pipeline/create-pipeline.js';
import { accountsOf, auditsOf, jobIdIn, privateAnswer, startBot, type BotHarness } from './harness.js';

const EXPLICIT = 'This server allows some of these words only in age-restricted channels. Nothing was spent.';
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

const accounts = () => accountsOf(g);

const audits = (action: string) => auditsOf(g, action);

const explicitList = (subcommand: 'add' | 'remove' | 'list', options: Record<string, string> = {}) =>
  privateAnswer(g.run(g.members.manager, { name: 'moderation', subcommandGroup: 'blocklist', subcommand, options: { ...options, list: 'explicit' } }));

describe('the explicit list', () => {
  it('refuses its words privately outside age-restricted channels at no cost, and allows them inside one and in its threads', async () => {
    expect((await explicitList('add', { words: 'velvet*, midnight kiss' })).content).toBe(
      'Added to the explicit list: `velvet*`, `midnight kiss`. It has 2 now; while `/settings safety` keeps explicit words to age-restricted channels, requests that use them elsewhere are refused, at no cost.',
    );
    expect(await audits('blocklist_add')).toMatchObject([{ actorId: g.members.manager, details: { entries: ['velvet*', 'midnight kiss'], list: 'explicit' } }]);
    const adult = h.emulator.createChannel(g.guild.id, { name: 'after-dark', nsfw: true });
    const adultThread = h.emulator.createThread(adult.id, { name: 'late requests', ownerId: g.members.alice });
    const plainThread = h.emulator.createThread(g.channelId, { name: 'daytime requests', ownerId: g.members.alice });

    const before = await accounts();
    for (const [where, channelId] of [['the music channel', g.channelId], ['a thread of it', plainThread.id]] as const) {
      const answer = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'a VELVETY night', title: 'Midnight  Kiss' }, channelId }));
      expect(answer.ephemeral, where).toBe(true);
      expect(answer.content, where).toBe(EXPLICIT);
    }
    expect(await accounts()).toEqual(before);
    const refused = await audits('request_refused_explicit_words');
    expect(refused).toMatchObject([
      { actorId: g.members.alice, details: { kind: 'song', field: 'prompt', rule: 'velvet*', channelId: plainThread.id } },
      { actorId: g.members.alice, details: { kind: 'song', field: 'prompt', rule: 'velvet*', channelId: g.channelId } },
    ]);
    expect(JSON.stringify(refused)).not.toContain('VELVETY');

    for (const channelId of [adult.id, adultThread.id]) {
      await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'a velvet midnight kiss' }, channelId }))));
    }
    // The blocklist holds everywhere, age-restricted channels too.
    await privateAnswer(g.run(g.members.manager, { name: 'moderation', subcommandGroup: 'blocklist', subcommand: 'add', options: { words: 'thorn' } }));
    expect((await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'a velvet thorn' }, channelId: adult.id }))).content).toBe(
      'This server does not allow some of these words. Nothing was spent.',
    );
  });

  it('restricts nothing once the server turns the setting off, and its entries are listed and removed apart from the blocklist', async () => {
    await explicitList('add', { words: 'velvet' });
    expect((await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'velvet' } }))).content).toBe(EXPLICIT);
    await privateAnswer(g.run(g.members.manager, { name: 'settings', subcommand: 'safety', options: { 'explicit-in-age-restricted-only': false } }));
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'lyrics', options: { prompt: 'velvet' } }))));

    expect((await explicitList('list')).content).toBe('Explicit words and phrases (1), allowed only in age-restricted channels:\n`velvet`');
    expect((await privateAnswer(g.run(g.members.manager, { name: 'moderation', subcommandGroup: 'blocklist', subcommand: 'list' }))).content).toContain('This server blocks no words.');
    // An entry is on one list at most; removing from the other list finds nothing.
    expect((await privateAnswer(g.run(g.members.manager, { name: 'moderation', subcommandGroup: 'blocklist', subcommand: 'add', options: { words: 'velvet' } }))).content).toBe(
      'Those are all on the blocklist already.',
    );
    expect((await privateAnswer(g.run(g.members.manager, { name: 'moderation', subcommandGroup: 'blocklist', subcommand: 'remove', options: { words: 'velvet' } }))).content).toContain(
      'None of those is on the blocklist.',
    );
    expect((await explicitList('remove', { words: 'velvet' })).content).toBe('Removed from the explicit list: `velvet`. 0 left.');
    expect((await explicitList('list')).content).toBe('The explicit list is empty. `/moderation blocklist add` adds to it, with the explicit list chosen.');
  });

  it('holds for a remix whose form brings the words in', async () => {
    await g.balance();
    const source = jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'harbour lights', title: 'Harbour' } })));
    const message = await g.delivered(source);
    await explicitList('add', { words: 'velvet' });
    const click = h.emulator.clickButton({ messageId: message.id, customId: `remix:${source}`, userId: g.members.bob });
    await click.waitForResponse();
    const before = await accounts();
    const answer = await privateAnswer(h.emulator.submitModal({ interaction: click, fields: { style: 'harbour lights, velvet', title: 'Harbour' } }));
    expect(answer.content).toBe(EXPLICIT);
    expect(await accounts()).toEqual(before);
  });
});

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
