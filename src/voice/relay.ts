/**
 * The media relay: a loopback http server that ffmpeg reads a song through, instead of the
 * song's own address. It fetches each request ffmpeg makes (its `Range` too, for seeking and
 * reconnecting) from the real address, follows redirects only on the same scheme, and counts
 * the bytes it passes for the song across all of them: past the cap the song is cut off.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DownloadError, followRedirects } from '../audio/download.js';

/**
 * The most one song may send the player. Songs are compressed (m4a, mp3: 20 MB is ten minutes at
 * 256 kbps); this leaves room for a four-minute WAV and for what seeking and reconnecting read twice.
 */
export const SONG_MAX_BYTES = 50 * 1024 * 1024;

/** What the relay passes on from the song's answers to ffmpeg. */
const ANSWER_HEADERS = ['content-type', 'content-length', 'content-range', 'accept-ranges'];

export interface RelayedSong {
  /** The loopback address ffmpeg reads, until the song is closed. */
  readonly url: string;
  /** Bytes of the song passed to ffmpeg so far, every request counted. */
  readonly passed: number;
  /** Why the relay cut the song off (over the cap, a redirect not followed), if it did. */
  readonly stopped: string | undefined;
  /** The song is over: its requests end, and its address answers 404 from now on. */
  close(): void;
}

export interface MediaRelay {
  /** Settles once the relay listens, or could not: then `open` throws. */
  readonly listening: Promise<void>;
  /** Admits `source` for one play. `onStopped` hears why the relay cut it off, once. */
  open(source: string, onStopped?: (reason: string) => void): RelayedSong;
  close(): Promise<void>;
}

interface Song extends RelayedSong {
  passed: number;
  stopped: string | undefined;
  readonly source: string;
  /** Ends each request in flight: its fetch and its answer to ffmpeg. */
  readonly cuts: Set<() => void>;
  stop(reason: string): void;
}

export function createMediaRelay(options: { maxBytes?: number; fetcher?: typeof globalThis.fetch } = {}): MediaRelay {
  const maxBytes = options.maxBytes ?? SONG_MAX_BYTES;
  const fetcher = options.fetcher ?? globalThis.fetch;
  const songs = new Map<string, Song>();
  const server = createServer((request, response) => void serve(request, response).catch(() => response.destroy()));
  let failure: Error | undefined;
  const listening = new Promise<void>((resolve) => {
    server.once('listening', () => resolve());
    server.once('error', (error) => {
      failure = error;
      resolve();
    });
  });
  server.listen(0, '127.0.0.1');
  // The relay never keeps a process or thread alive on its own.
  server.unref();

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const token = /^\/([0-9a-f]{32})\//.exec(request.url ?? '')?.[1];
    const song = token === undefined ? undefined : songs.get(token);
    if (!song) return void response.writeHead(404).end();
    if (request.method !== 'GET') return void response.writeHead(405).end();
    if (song.stopped !== undefined) return void response.writeHead(403).end();

    const upstream = new AbortController();
    const cut = () => {
      upstream.abort();
      response.destroy();
    };
    song.cuts.add(cut);
    response.on('close', () => {
      song.cuts.delete(cut);
      upstream.abort();
    });
    // Identity: what arrives is what is counted and what Content-Length and Range speak of.
    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    if (request.headers.range !== undefined) headers.range = request.headers.range;

    let answer: Response;
    try {
      answer = await followRedirects(song.source, 'same-scheme', fetcher, upstream.signal, headers);
    } catch (error) {
      if (error instanceof DownloadError && error.reason === 'redirect') song.stop(error.message);
      if (!response.destroyed) response.writeHead(502).end();
      return;
    }
    if (response.destroyed) return void (await answer.body?.cancel().catch(() => {}));
    response.writeHead(answer.status, answerHeaders(answer.headers));
    if (!answer.body) return void response.end();
    try {
      for await (const chunk of answer.body) {
        const room = maxBytes - song.passed;
        const part = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
        song.passed += part.byteLength;
        if (part.byteLength > 0 && !response.write(part)) await drained(response);
        if (part !== chunk) {
          // Without a declared length a clean end is the end of the song to ffmpeg; with one it
          // would wait for the rest, so the connection is cut (and its reconnects refused).
          song.cuts.delete(cut);
          upstream.abort();
          if (response.hasHeader('content-length')) response.destroy();
          else response.end();
          return song.stop(`over ${maxBytes} bytes`);
        }
        if (response.destroyed) return;
      }
      response.end();
    } catch {
      // The song's server broke off, or ffmpeg hung up: ffmpeg sees the cut, and may ask again.
      response.destroy();
    }
  }

  return {
    listening,
    open(source, onStopped) {
      if (failure) throw new Error(`the media relay is not listening: ${failure.message}`);
      const { port } = server.address() as AddressInfo;
      const token = randomBytes(16).toString('hex');
      const song: Song = {
        url: `http://127.0.0.1:${port}/${token}/${fileName(source)}`,
        source,
        passed: 0,
        stopped: undefined,
        cuts: new Set(),
        stop(reason) {
          if (song.stopped !== undefined) return;
          song.stopped = reason;
          for (const cut of [...song.cuts]) cut();
          onStopped?.(reason);
        },
        close() {
          songs.delete(token);
          for (const cut of [...song.cuts]) cut();
        },
      };
      songs.set(token, song);
      return song;
    },
    async close() {
      for (const song of [...songs.values()]) song.close();
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function answerHeaders(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ANSWER_HEADERS) {
    const value = headers.get(name);
    if (value !== null) kept[name] = value;
  }
  // A body fetch decoded anyway no longer has the length its server declared.
  if (headers.has('content-encoding')) delete kept['content-length'];
  return kept;
}

/** The source's file name, for ffmpeg's guess at the format; never more than a plain name. */
function fileName(source: string): string {
  let last: string | undefined;
  try {
    last = new URL(source).pathname.split('/').pop();
  } catch {
    last = undefined;
  }
  const plain = (last ?? '').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
  return plain === '' ? 'song' : plain;
}

/** Resolves when `response` can take more, or is gone. */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
