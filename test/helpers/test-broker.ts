/** An aedes broker on a free TCP port, for tests that need real MQTT sockets. */
import net from 'node:net';
import { Aedes } from 'aedes';

export interface TestBroker {
  url: string;
  port: number;
  aedes: Aedes;
  /** Drops every client connection (the broker keeps running), to exercise reconnects. */
  dropClients(): void;
  /** Drops the connections of clients whose id starts with `prefix`. */
  dropClientsWithIdPrefix(prefix: string): void;
  stop(): Promise<void>;
}

export async function startTestBroker(): Promise<TestBroker> {
  const aedes = await Aedes.createBroker();
  const sockets = new Set<net.Socket>();
  const byClientId = new Map<string, net.Socket>();
  aedes.on('client', (client) => {
    byClientId.set(client.id, client.conn as net.Socket);
  });
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    aedes.handle(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('broker did not bind');
  return {
    url: `mqtt://127.0.0.1:${address.port}`,
    port: address.port,
    aedes,
    dropClients: () => {
      for (const socket of sockets) socket.destroy();
    },
    dropClientsWithIdPrefix: (prefix) => {
      for (const [id, socket] of byClientId) if (id.startsWith(prefix)) socket.destroy();
    },
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
