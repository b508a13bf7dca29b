/**
 * Starts the voice thread's decoders (ffmpeg) from a small process of its own. Starting a
 * process forks its parent, and a fork takes longer the more memory the parent holds: from the
 * bot, with many players, each start held its voice thread (and every frame of its guilds) for
 * tens of milliseconds. The launcher is small, so a start costs it a few, and the voice thread a
 * message. Each decoder writes its audio to a Unix socket the voice thread listens on, in a
 * folder only this process's user may enter. Where the launcher cannot run, decoders start here.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough, type Readable } from 'node:stream';
import { decoderArgs, spawnDecoder, type DecoderStart } from '../ffmpeg.js';

/** How a decoder ended: its exit code (null: killed, or still running when asked) and the end of what it wrote on stderr. */
export interface DecoderExit {
  readonly code: number | null;
  readonly error: string;
}

/** A decoder running, wherever it was started. */
export interface Decoder {
  /** The encoded audio. */
  readonly stdout: Readable;
  /** Settles once it has exited (or could not start: code -1). */
  readonly exited: Promise<DecoderExit>;
  /** Ends it at once (SIGKILL). */
  kill(): void;
}

export interface DecoderLauncher {
  start(ffmpegPath: string, url: string, libopus: boolean, start: DecoderStart): Decoder;
  close(): void;
}

/** The decoders' niceness: below the bot's priority, above idle work. */
const DECODER_NICENESS = 10;

/** The launcher's own code: it starts and kills decoders as told, one JSON line each, and answers each exit; its decoders end with it. */
const LAUNCHER_CODE = `
const { spawn } = require('node:child_process');
const running = new Map();
const tell = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const order = JSON.parse(line);
  if (order.op === 'kill') return void running.get(order.id)?.kill('SIGKILL');
  let error = '';
  let told = false;
  const end = (code) => { if (!told) { told = true; running.delete(order.id); tell({ id: order.id, code, error }); } };
  const child = spawn(order.path, order.args, { stdio: ['ignore', 'ignore', 'pipe'] });
  running.set(order.id, child);
  child.stderr.setEncoding('utf8').on('data', (chunk) => (error = (error + chunk).slice(-500)));
  child.on('error', (spawnError) => { error = spawnError.message; end(-1); });
  child.on('close', (code) => end(code));
});
process.stdin.on('end', () => { for (const child of running.values()) child.kill('SIGKILL'); process.exit(0); });
`;

export function createDecoderLauncher(): DecoderLauncher {
  let folder: string;
  try {
    folder = mkdtempSync(path.join(os.tmpdir(), 'music-bot-voice-'));
  } catch {
    // No temporary folder to listen in: the decoders start here.
    return { start: startHere, close: () => {} };
  }
  const exits = new Map<number, (exit: DecoderExit) => void>();
  let nextId = 0;
  // Without NODE_OPTIONS: the bot's own loaders and flags are not the launcher's.
  const child = spawn(process.execPath, ['-e', LAUNCHER_CODE], { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, NODE_OPTIONS: '' } });
  // Its decoders (which inherit its priority) run ahead of the frames: they yield the CPU to the bot's threads, commands and frames first.
  if (child.pid !== undefined) {
    try {
      os.setPriority(child.pid, DECODER_NICENESS);
    } catch {
      // A system that refuses: they run at the bot's priority.
    }
  }
  let alive = true;
  const gone = () => {
    alive = false;
    for (const exit of [...exits.values()]) exit({ code: -1, error: 'the decoder launcher exited' });
  };
  child.on('error', gone);
  child.on('exit', gone);
  child.stdin.on('error', () => {});
  createInterface({ input: child.stdout }).on('line', (line) => {
    const { id, code, error } = JSON.parse(line) as DecoderExit & { id: number };
    exits.get(id)?.({ code, error });
  });

  function launched(ffmpegPath: string, url: string, libopus: boolean, start: DecoderStart): Decoder {
    const id = (nextId += 1);
    const socket = path.join(folder, `${id}.sock`);
    const stdout = new PassThrough();
    let ended = false;
    let sent = false;
    let connected = false;
    const exited = new Promise<DecoderExit>((resolve) =>
      exits.set(id, (exit) => {
        exits.delete(id);
        resolve(exit);
      }),
    );
    // One connection, the decoder's: its audio, until it exits.
    const server = createServer((connection) => {
      connected = true;
      server.close();
      connection.on('error', () => stdout.end());
      connection.pipe(stdout);
    });
    server.on('error', () => stdout.end());
    server.listen(socket, () => {
      if (ended) return void server.close();
      const args = decoderArgs(url, libopus, start, `unix:${socket}`);
      sent = true;
      child.stdin.write(`${JSON.stringify({ op: 'start', id, path: ffmpegPath, args })}\n`);
    });
    void exited.then(() => {
      ended = true;
      if (server.listening) server.close();
      // A decoder that never connected has no audio to end with.
      if (!connected) stdout.end();
    });
    return {
      stdout,
      exited,
      kill: () => {
        ended = true;
        // Killed before it was asked for: it never runs.
        if (!sent) exits.get(id)?.({ code: null, error: '' });
        else if (alive) child.stdin.write(`${JSON.stringify({ op: 'kill', id })}\n`);
      },
    };
  }

  return {
    start(ffmpegPath, url, libopus, start) {
      return alive ? launched(ffmpegPath, url, libopus, start) : startHere(ffmpegPath, url, libopus, start);
    },
    close() {
      child.stdin.end();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A decoder forked from this process, where the launcher cannot run. */
function startHere(ffmpegPath: string, url: string, libopus: boolean, start: DecoderStart): Decoder {
  const process = spawnDecoder(ffmpegPath, url, libopus, start);
  let error = '';
  process.stderr.setEncoding('utf8').on('data', (chunk: string) => (error = `${error}${chunk}`.slice(-500)));
  const exited = new Promise<DecoderExit>((resolve) => {
    process.on('error', (spawnError) => resolve({ code: -1, error: spawnError.message }));
    process.on('close', (code) => resolve({ code, error }));
  });
  process.stdout.on('error', () => {});
  return { stdout: process.stdout, exited, kill: () => void (process.exitCode === null && process.kill('SIGKILL')) };
}
