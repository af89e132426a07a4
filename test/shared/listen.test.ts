import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { listen } from '../../src/shared/listen.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) if (server.listening) await new Promise((resolve) => server.close(resolve));
});

function server(): Server {
  const created = createServer();
  servers.push(created);
  return created;
}

describe('listen', () => {
  it('names a port that is taken PORT_IN_USE, and takes a free one instead when told to', async () => {
    const { port } = await listen(server(), { port: 0, host: '127.0.0.1', label: 'MQTT' });
    await expect(listen(server(), { port, host: '127.0.0.1', label: 'MQTT' })).rejects.toMatchObject({
      code: 'PORT_IN_USE',
      message: `MQTT port ${port} on 127.0.0.1 is already in use`,
    });
    const other = await listen(server(), { port, host: '127.0.0.1', label: 'MQTT', fallbackToFreePort: true });
    expect(other.fellBack).toBe(true);
    expect(other.port).not.toBe(port);
  });

  it('refuses a port no server can have as BAD_REQUEST, not as a port in use or a RangeError', async () => {
    for (const port of [70_000, -1, 1.5]) {
      await expect(listen(server(), { port, host: '127.0.0.1', label: 'MQTT' })).rejects.toMatchObject({
        name: 'SimError',
        code: 'BAD_REQUEST',
        message: `MQTT port ${port} is not valid: use a whole number from 0 to 65535`,
      });
    }
  });

  it('names a host that does not resolve, or is not an address of this machine, HOST_UNAVAILABLE', async () => {
    await expect(listen(server(), { port: 0, host: 'no.such.host.invalid', label: 'MQTT' })).rejects.toMatchObject({
      code: 'HOST_UNAVAILABLE',
      message: 'Cannot listen on no.such.host.invalid for MQTT: the host name does not resolve (ENOTFOUND)',
    });
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): documentation only, never a local address.
    await expect(listen(server(), { port: 0, host: '192.0.2.1', label: 'MQTT' })).rejects.toMatchObject({
      code: 'HOST_UNAVAILABLE',
      message: "Cannot listen on 192.0.2.1 for MQTT: the address is not one of this machine's (EADDRNOTAVAIL)",
    });
  });
});
