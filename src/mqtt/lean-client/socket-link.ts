import net from 'node:net';
import tls from 'node:tls';
import type { LinkOwner } from './link.js';
import { NetworkLink } from './network-link.js';
import type { LeanTarget } from './target.js';

/**
 * A connection over TCP or TLS, with TCP_NODELAY set on every socket (a reconnect opens a new one):
 * Nagle's algorithm adds about 44 ms per round trip on loopback. TLS options made by a function (a
 * station reading its certificate and key) are made first, and the socket opens after; what is
 * pushed meanwhile waits here. The TLS options, and so the client's certificate and its secure
 * context, live only as long as the socket: a reconnect makes them again.
 */
export class SocketLink extends NetworkLink {
  #socket: net.Socket | undefined;

  constructor(client: LinkOwner, target: Extract<LeanTarget, { kind: 'tcp' | 'tls' }>) {
    super(client);
    const { host, port } = target;
    if (target.kind === 'tcp') this.#attach(net.connect({ host, port, noDelay: true }));
    else this.connectWith(target.tls, (options) => this.#attach(tls.connect({ ...options, host, port })));
  }

  #attach(socket: net.Socket): void {
    this.#socket = socket;
    // tls.connect takes no `noDelay` option: set on the socket before it connects, it applies once it does.
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      const error = this.reader.feed(chunk);
      if (error) socket.destroy(error);
    });
    socket.on('error', (error) => {
      if (!this.closed) this.client.onLinkError(error);
    });
    socket.on('drain', () => {
      if (!this.closed) this.client.onLinkDrain(this);
    });
    socket.on('close', () => this.close());
    this.waiting.drain(
      (packet) => socket.write(packet),
      () => socket.end(),
    );
  }

  /** Written before the socket connects, a packet waits in the socket's buffer (or here, before there is a socket). */
  push(packet: Buffer | null): void {
    const socket = this.#socket;
    if (this.closed || socket?.destroyed) return;
    if (!socket) this.waiting.add(packet);
    else if (packet) socket.write(packet);
    else socket.end();
  }

  destroy(error?: Error): void {
    if (this.#socket) this.#socket.destroy(error);
    // No socket yet: closed on a later microtask, as a socket would report it.
    else if (!this.closed) queueMicrotask(() => this.close(error));
  }

  backlog(): number {
    return this.waiting.bytes + (this.#socket?.writableLength ?? 0);
  }
}
