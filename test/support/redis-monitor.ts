/**
 * What Redis runs, as MONITOR reports it, on a plain socket of its own. A client library's
 * MONITOR mode shares its reply parser with its command queue, and lines that arrive while it
 * disconnects can reach a queue that is already gone; here every line is parsed by the test,
 * and `close` simply destroys the socket.
 */
import net from 'node:net';

export interface MonitoredCommand {
  /** The command's name, in lower case (`incr`, `pexpire`). */
  readonly name: string;
  /** Its arguments, keys first, as MONITOR quotes them, unescaped. */
  readonly args: readonly string[];
}

export interface RedisMonitor {
  close(): void;
}

/**
 * Resolves once Redis answered MONITOR, so every command from then on reaches `onCommand`.
 * The URL's user and password, if any, are sent with AUTH first.
 */
export async function monitorRedis(url: string, onCommand: (command: MonitoredCommand) => void): Promise<RedisMonitor> {
  const address = new URL(url);
  const socket = net.connect(Number(address.port || 6379), address.hostname);
  const auth = address.password ? [command('AUTH', ...(address.username ? [decodeURIComponent(address.username)] : []), decodeURIComponent(address.password))] : [];
  // One status reply per command sent: AUTH's, then MONITOR's; every line after those is a command.
  let awaitingReplies = auth.length + 1;
  let buffered = '';
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (line.startsWith('-')) {
          socket.destroy();
          reject(new Error(`Redis refused MONITOR: ${line.slice(1)}`));
          return;
        }
        if (awaitingReplies > 0) {
          awaitingReplies -= 1;
          if (awaitingReplies === 0) resolve();
          continue;
        }
        const parsed = parseMonitorLine(line);
        if (parsed) onCommand(parsed);
      }
    });
    socket.once('connect', () => socket.write([...auth, command('MONITOR')].join('')));
  });
  // Closed by the test or by the server: either way nothing more is read.
  socket.on('error', () => {});
  return { close: () => socket.destroy() };
}

/** A command in Redis's protocol (RESP). */
function command(...words: string[]): string {
  return `*${words.length}\r\n${words.map((word) => `$${Buffer.byteLength(word)}\r\n${word}\r\n`).join('')}`;
}

/** `+1795946967.028573 [0 lua] "INCR" "key"`: the quoted words, unescaped. */
export function parseMonitorLine(line: string): MonitoredCommand | undefined {
  const words = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map(([, quoted]) => unescapeMonitorWord(quoted!));
  const [name, ...args] = words;
  return name === undefined ? undefined : { name: name.toLowerCase(), args };
}

/** MONITOR writes bytes outside printable ASCII as `\xNN`, and `\\`, `\"`, `\n`, `\r`, `\t`, `\a`, `\b`. */
function unescapeMonitorWord(quoted: string): string {
  const named: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b', '\\': '\\', '"': '"' };
  return quoted.replace(/\\x([0-9a-fA-F]{2})|\\(.)/g, (_, hex: string | undefined, char: string | undefined) =>
    hex !== undefined ? String.fromCharCode(Number.parseInt(hex, 16)) : (named[char!] ?? char!),
  );
}
