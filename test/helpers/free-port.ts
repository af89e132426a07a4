import net from 'node:net';
import { eventually } from './eventually.js';

/**
 * A port that was free a moment ago (for servers that cannot be told to use port 0, like Mosquitto),
 * on 127.0.0.1 unless told another local address.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once something accepts TCP connections on the port. */
export async function waitForPort(port: number, timeoutMs = 5000): Promise<void> {
  const accepts = (): Promise<boolean> =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  await eventually(accepts, { timeout: timeoutMs, interval: 50, what: `something to listen on port ${port}` });
}
