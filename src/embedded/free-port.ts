import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;
const handedOut = new Set<number>();

/**
 * A free port for a server we are about to start. It is drawn at random from below the kernel's
 * ephemeral range, so an outgoing connection cannot take it between this probe and the server's
 * own bind, and it is never handed out twice in one process.
 */
export async function findFreePort(): Promise<number> {
  const [ephemeralLow] = ephemeralRange();
  const span = ephemeralLow - LOWEST;
  for (let attempt = 0; attempt < 64 && span > 0; attempt += 1) {
    const port = LOWEST + Math.floor(Math.random() * span);
    if (handedOut.has(port) || !(await bindable(port))) continue;
    handedOut.add(port);
    return port;
  }
  return kernelPort();
}

/** The kernel's ephemeral range, from which it picks ports for outgoing connections. */
export function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low! > LOWEST) return [low!, high!];
  } catch {
    // Not Linux: the range most systems use.
  }
  return [49_152, 65_535];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
