/**
 * One voice thread as the engine (engine.ts) drives it: the calls it answers, the events it
 * sends, and its life. A thread that exits while running is started again for the next joins;
 * its lines are gone with it. Where worker threads cannot start, the same code runs on the main
 * thread.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../logger.js';
import { createVoiceCore } from './core.js';
import type { FromVoice, ToVoice, VoiceCall } from './protocol.js';

/** What a voice thread tells the engine, besides the answers to its calls. */
export type VoiceEvent = Exclude<FromVoice, { type: 'result' }>;

interface Transport {
  send(message: ToVoice): void;
  close(): Promise<void>;
}

export interface VoiceThreadOptions {
  readonly logger: Logger;
  /** Starts the thread's worker. @defaultValue {@link startVoiceThread} */
  readonly start?: () => Worker;
  readonly onEvent: (event: VoiceEvent) => void;
  /** The running thread exited (crashed, or was ended): every line on it is gone, and a new thread takes the next joins. */
  readonly onExit: () => void;
}

export class VoiceThread {
  /** The guilds whose lines run here. */
  readonly guilds = new Set<string>();
  readonly #options: VoiceThreadOptions;
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  #nextCall = 0;
  #transport: Transport;
  #closing = false;

  constructor(options: VoiceThreadOptions) {
    this.#options = options;
    this.#transport = this.#start();
  }

  call(call: VoiceCall): Promise<unknown> {
    const id = (this.#nextCall += 1);
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#transport.send({ type: 'call', id, call });
    });
  }

  send(message: ToVoice): void {
    this.#transport.send(message);
  }

  async close(): Promise<void> {
    this.#closing = true;
    await this.#transport.close();
  }

  #receive(message: FromVoice): void {
    if (message.type !== 'result') return this.#options.onEvent(message);
    const pending = this.#pending.get(message.id);
    this.#pending.delete(message.id);
    if (message.error === undefined) pending?.resolve(message.value);
    else pending?.reject(new Error(message.error));
  }

  /** The voice side on this thread, asynchronous both ways as across a thread: no caller sees an answer before it returns. */
  #inThisThread(): Transport {
    const core = createVoiceCore((message) => queueMicrotask(() => this.#receive(message)));
    return {
      send: (message) => queueMicrotask(() => core.receive(message)),
      close: async () => core.close(),
    };
  }

  #start(): Transport {
    const worker = (this.#options.start ?? startVoiceThread)();
    const { logger } = this.#options;
    let ready = false;
    // What is sent before the thread runs waits in its port; kept here too, for a thread that never starts.
    const unsent: ToVoice[] = [];
    worker.on('message', (message: FromVoice | { type: 'ready' }) => {
      if (message.type !== 'ready') return this.#receive(message);
      ready = true;
      unsent.length = 0;
    });
    worker.on('error', (error) => logger.error({ err: error }, 'the voice thread failed'));
    worker.on('exit', (code) => {
      if (this.#closing) return;
      if (!ready) {
        // It never started (a platform without worker threads): the same code on this thread.
        logger.warn({ code }, 'the voice thread did not start; voice runs on the main thread');
        this.#transport = this.#inThisThread();
        for (const message of unsent.splice(0)) this.#transport.send(message);
        return;
      }
      logger.error({ code }, 'the voice thread exited; its players end');
      for (const pending of this.#pending.values()) pending.reject(new Error('the voice thread exited'));
      this.#pending.clear();
      this.#transport = this.#start();
      this.#options.onExit();
    });
    return {
      send: (message) => {
        if (!ready) unsent.push(message);
        worker.postMessage(message);
      },
      close: async () => {
        worker.postMessage({ type: 'close' });
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        const timeout = new Promise<void>((resolve) => setTimeout(resolve, 2_000).unref());
        await Promise.race([exited, timeout]);
        await worker.terminate();
      },
    };
  }
}

/**
 * Starts a voice thread's worker (thread.ts). Run from TypeScript sources (`node --import tsx`),
 * it registers tsx itself: a worker does not inherit the loader hooks of the thread that starts it.
 */
export function startVoiceThread(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./thread.js', import.meta.url));
  // Its ESM entry, read from its exports map: resolved from here, 'tsx/esm/api' gives the CommonJS one.
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const api = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api']!.import.default;
  const tsx = pathToFileURL(path.join(path.dirname(manifest), api)).href;
  const entry = new URL('./thread.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true });
}
