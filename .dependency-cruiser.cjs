/**
 * The bot's layers, from the bottom up. A module may import its own layer and the layers
 * below it, never one above: so the pipeline never learns about Discord interactions, and an
 * adapter never calls back into the services that use it. `npm run lint` checks it.
 * The README's architecture section draws the same picture.
 */
const LAYERS = [
  {
    name: 'foundation',
    what: 'configuration, logging, metrics, the music API spec\'s facts, the message catalogue and small pure helpers',
    path: '^src/(config|logger|metrics|text|music-api-spec)\\.ts$|^src/(audio|i18n)/',
  },
  {
    name: 'adapters',
    what: 'the outside world: Postgres, Redis queues, the music API, Discord REST, the embedded servers',
    path: '^src/(db|music-api|queue|discord-rest|embedded)/',
  },
  {
    name: 'services',
    what: 'what the bot does: the pipeline, credits, guild settings',
    path: '^src/(pipeline|credits|guilds)/',
  },
  {
    name: 'edges',
    what: 'where requests come in: Discord interactions, slash commands, the HTTP server',
    path: '^src/(discord|http)/|^commands/',
  },
  {
    name: 'entry points',
    what: 'processes and scripts that put the parts together',
    path: '^src/(main|app|cli-support)\\.ts$|^src/scripts/',
  },
];

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
    ...upward,
    {
      name: 'runtime-imports-sandbox',
      comment: 'The stand-ins (emulator, simulator, playground) never ship in the bot.',
      severity: 'error',
      from: { path: '^(src|commands)/', pathNot: '^src/sandbox/' },
      to: { path: '^src/sandbox/' },
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
      from: { path: '^(src|commands)/' },
      to: { circular: true, dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|test|migrations)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
