import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ephemeralRange, findFreePort } from '../../../src/embedded/free-port.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('findFreePort', () => {
  it('hands out distinct ports below the ephemeral range that a server can then listen on', async () => {
    const [low] = ephemeralRange();
    const ports = [];
    for (let i = 0; i < 20; i += 1) ports.push(await findFreePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeLessThan(low);
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '0.0.0.0', resolve);
      });
    }
  });
});
