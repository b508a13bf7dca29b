/**
 * The bot's layers, from the bottom up. A module may import its own layer and the layers
 * below it, never one above: so the pipeline never learns about Discord interactions, and an
 * adapter never calls back into the services that use it. `npm run lint` checks it.
 * Every file under src/, commands/ and packages/ must sit in a layer or a named stand-in:
 * a file in a new folder fails lint until it is placed here.
 */
const LAYERS = [
  {
    name: 'foundation',
    what: 'configuration, logging, metrics, the music API spec\'s facts, the message catalogue, the blocklist matcher and small pure helpers',
    path: '^src/(config|logger|metrics|text|music-api-spec|webhook-address)\\.ts$|^src/(audio|i18n|safety)/',
  },
  {
    name: 'adapters',
    what: 'the outside world: Postgres, Redis queues, the music API, Discord REST, the embedded servers',
    path: '^src/(db|music-api|queue|discord-rest|embedded)/',
  },
  {
    name: 'services',
    what: 'what the bot does: the pipeline, credits, guild settings, purchases',
    path: '^src/(pipeline|credits|guilds|premium)/',
  },
  {
    name: 'edges',
    what: 'where requests come in: Discord interactions, slash commands, the HTTP server, the moderators\' dashboard; the voice player, which lives beside the gateway',
    path: '^src/(discord|http|voice|dashboard)/|^commands/',
  },
  {
    name: 'entry points',
    what: 'processes, the workers\' thread and scripts that put the parts together',
    path: '^src/(main|app|cli-support|workers-thread|workers-thread-main)\\.ts$|^src/scripts/',
  },
];

/** The stand-ins for the outside world (Discord, the music service) and their tools: never part of the bot. */
const STAND_INS = [
  { name: 'discord-emulator', path: '^packages/discord-emulator/' },
  { name: 'music-api-sim', path: '^packages/music-api-sim/' },
  { name: 'playground', path: '^packages/playground/' },
  { name: 'test-world', path: '^packages/test-world/' },
];

/** What the test world and the playground may import from the bot: its composition root, configuration and embedded servers. */
const BOT_ENTRY_POINTS = '^src/(app|config|logger|cli-support)\\.ts$|^src/embedded/|^src/discord/deploy\\.ts$|^src/db/|^commands/index\\.ts$';

const PLACED = [...LAYERS, ...STAND_INS].map((place) => `(${place.path})`).join('|');
const CHECKED = '^(src|commands|packages)/';

/** The Discord client (discord.js and @discordjs/*) lives at the Discord edge and in the REST adapter only. */
const DISCORD_EDGE = '^src/discord/|^src/voice/|^src/http/interactions\\.ts$|^src/discord-rest/|^commands/';
const DISCORD_CLIENT = '(^|/)node_modules/(discord\\.js|@discordjs/[^/]+)/';
const DISCORD_FORMATTERS = '(^|/)node_modules/@discordjs/formatters/';

const upward = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `${layer.name}-imports-upward`,
  comment: `${layer.name} (${layer.what}) must not import a layer above it: ${LAYERS.slice(index + 1)
    .map((above) => above.name)
    .join(', ')}.`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: LAYERS.slice(index + 1).map((above) => `(${above.path})`).join('|') },
}));

module.exports = {
  forbidden: [
    {
      name: 'not-placed',
      comment: `Every file belongs to a layer or a stand-in; add its folder to LAYERS or STAND_INS in .dependency-cruiser.cjs.`,
      severity: 'error',
      from: { path: CHECKED, pathNot: PLACED },
      to: {},
    },
    {
      name: 'not-placed-orphan',
      comment: 'Every file belongs to a layer or a stand-in, one that imports nothing and is imported by nothing too.',
      severity: 'error',
      from: { orphan: true, path: CHECKED, pathNot: PLACED },
      to: {},
    },
    {
      name: 'imports-not-placed',
      comment: 'Every file belongs to a layer or a stand-in, one that imports nothing too.',
      severity: 'error',
      from: {},
      to: { path: CHECKED, pathNot: PLACED },
    },
    ...upward,
    {
      name: 'discord-client-outside-discord-edge',
      comment:
        'discord.js and @discordjs/* belong to the Discord edge (src/discord, src/voice, src/http/interactions.ts), the Discord REST adapter ' +
        'and commands/; credits, db, queue, music-api, guilds and the pipeline hand plain data to them.',
      severity: 'error',
      from: { path: CHECKED, pathNot: DISCORD_EDGE },
      to: { path: DISCORD_CLIENT, pathNot: DISCORD_FORMATTERS },
    },
    {
      name: 'discord-formatters-outside-text-helpers',
      comment: '@discordjs/formatters (pure string functions, no client) may serve the shared text helpers, src/text.ts, besides the Discord edge.',
      severity: 'error',
      from: { path: CHECKED, pathNot: `${DISCORD_EDGE}|^src/text\\.ts$` },
      to: { path: DISCORD_FORMATTERS },
    },
    {
      name: 'discord-wire-types-in-a-plain-layer',
      comment:
        'discord-api-types is Discord\'s wire vocabulary (types and enums, no client): the edge, the REST adapter, the pipeline\'s ' +
        'rendering of the channel\'s messages and the stand-ins speak it; credits, db, queue, music-api, guilds and the rest do not.',
      severity: 'error',
      from: { path: CHECKED, pathNot: `${DISCORD_EDGE}|^src/pipeline/|${STAND_INS.map((place) => place.path).join('|')}` },
      to: { path: '(^|/)node_modules/discord-api-types/' },
    },
    {
      name: 'bot-imports-stand-in',
      comment: 'The stand-in packages (emulator, simulator, playground, test world) never ship in the bot.',
      severity: 'error',
      from: { path: '^(src|commands)/' },
      to: { path: '^packages/' },
    },
    {
      name: 'stand-in-imports-bot',
      comment: 'The emulator and the simulator stand alone, built from Discord\'s documents and the spec, not from the bot.',
      severity: 'error',
      from: { path: '^packages/(discord-emulator|music-api-sim)/' },
      to: { path: '^(src|commands)/' },
    },
    {
      name: 'world-reaches-into-bot',
      comment: 'The test world and the playground start the bot through its entry points, as a process or a host would.',
      severity: 'error',
      from: { path: '^packages/(test-world|playground)/' },
      to: { path: '^(src|commands)/', pathNot: BOT_ENTRY_POINTS },
    },
    {
      name: 'discord-layer-imports-commands',
      comment: 'Commands implement the Discord layer\'s contract; the layer is handed the list by the entry points.',
      severity: 'error',
      from: { path: '^src/discord/' },
      to: { path: '^commands/' },
    },
    {
      name: 'no-circular',
      comment: 'Modules that import each other cannot be understood, tested or moved apart.',
      severity: 'error',
      from: { path: '^(src|commands|packages)/' },
      to: { circular: true, dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // node_modules is not followed, but stays visible: the Discord rules look at which packages a file imports.
    exclude: { path: '^(test|migrations)/|^packages/[^/]+/test/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'types', 'default'],
    },
  },
};
