/**
 * Runs the music API simulator standalone:
 *   npm run music-api-sim -- --port <port> --api-key <key> --credits <n> [--task-ms <ms>]
 * Prints `music-api-sim listening on <url>` once it accepts requests.
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { parseRandomFaults, type RandomFaults } from './faults.js';
import { startMusicApiSim } from './server.js';

const USAGE = `usage: music-api-sim --api-key <key> [--port 0] [--host 127.0.0.1] [--credits 1000] [--task-ms 2000]
       [--allow-http-webhooks] [--signature-scheme spec|timestamped] [--signature-encoding hex|base64|base64url]
       [--concurrency-limit 20]
       [--webhook-attempts 4] [--webhook-base-ms 500] [--models "ModelB-2.0,ModelB-2.0 Pro"]
       [--persona-song-cost 10] [--song-seconds 2] [--public-url http://host:port] [--log-level info]
       [--random-faults 0.3] [--random-fault-mix "429=1,hang=2,no-webhook=0"] [--random-fault-seed 7]`;

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function integer(name: string, value: string | undefined, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) fail(`--${name} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'api-key': { type: 'string' },
      credits: { type: 'string' },
      'task-ms': { type: 'string' },
      'song-seconds': { type: 'string' },
      'allow-http-webhooks': { type: 'boolean' },
      'signature-scheme': { type: 'string' },
      'signature-encoding': { type: 'string' },
      'concurrency-limit': { type: 'string' },
      'webhook-attempts': { type: 'string' },
      'webhook-base-ms': { type: 'string' },
      models: { type: 'string' },
      'persona-song-cost': { type: 'string' },
      'public-url': { type: 'string' },
      'log-level': { type: 'string' },
      'random-faults': { type: 'string' },
      'random-fault-mix': { type: 'string' },
      'random-fault-seed': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
const args = parsed.values;
if (args.help === true) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const apiKey = args['api-key'];
if (apiKey === undefined || apiKey === '') fail('--api-key is required');
const scheme = args['signature-scheme'] ?? 'spec';
if (scheme !== 'spec' && scheme !== 'timestamped') fail('--signature-scheme must be spec or timestamped');
const encoding = args['signature-encoding'] ?? 'hex';
if (encoding !== 'hex' && encoding !== 'base64' && encoding !== 'base64url') fail('--signature-encoding must be hex, base64 or base64url');

function randomFaultsOf(rate: string | undefined, mix: string | undefined, seed: string | undefined): RandomFaults | undefined {
  if (rate === undefined) {
    if (mix !== undefined || seed !== undefined) fail('--random-fault-mix and --random-fault-seed need --random-faults <rate>');
    return undefined;
  }
  const weights = Object.fromEntries(
    (mix ?? '')
      .split(',')
      .filter((pair) => pair.trim() !== '')
      .map((pair) => {
        const [kind = '', weight = ''] = pair.split('=').map((part) => part.trim());
        return [kind, weight === '' ? Number.NaN : Number(weight)];
      }),
  );
  const settings = parseRandomFaults({
    rate: Number(rate),
    ...(mix !== undefined && { mix: weights }),
    ...(seed !== undefined && { seed: integer('random-fault-seed', seed, undefined) }),
  });
  if (typeof settings === 'string') fail(`--random-faults: ${settings}`);
  return settings;
}
const randomFaults = randomFaultsOf(args['random-faults'], args['random-fault-mix'], args['random-fault-seed']);

const logger = pino({ name: 'music-api-sim', level: args['log-level'] ?? 'info' });
const sim = await startMusicApiSim({
  apiKey,
  credits: integer('credits', args.credits, 1000) ?? 1000,
  port: integer('port', args.port, 0),
  host: args.host ?? '127.0.0.1',
  taskMs: integer('task-ms', args['task-ms'], undefined),
  allowHttpWebhooks: args['allow-http-webhooks'] ?? false,
  signatureScheme: scheme,
  signatureEncoding: encoding,
  concurrencyLimit: integer('concurrency-limit', args['concurrency-limit'], undefined),
  webhookRetry: {
    attempts: integer('webhook-attempts', args['webhook-attempts'], 4) ?? 4,
    baseMs: integer('webhook-base-ms', args['webhook-base-ms'], 500) ?? 500,
  },
  models: args.models?.split(',').map((model) => model.trim()).filter((model) => model.length > 0),
  personaSongCost: integer('persona-song-cost', args['persona-song-cost'], undefined),
  songSeconds: integer('song-seconds', args['song-seconds'], undefined),
  publicUrl: args['public-url'],
  ...(randomFaults !== undefined && { randomFaults }),
  logger,
}).catch((error: unknown) => fail(`cannot start: ${error instanceof Error ? error.message : String(error)}`));

process.stdout.write(`music-api-sim listening on ${sim.url}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void sim.close().then(() => process.exit(0));
  });
}
