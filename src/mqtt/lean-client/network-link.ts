import type tls from 'node:tls';
import type { Link, LinkOwner } from './link.js';
import { PacketReader } from './packet-reader.js';
import type { TlsSource } from './target.js';

/**
 * What a network link was pushed before its connection exists (TLS options still being made, a
 * WebSocket still opening), sent once it does, in order, with the end after them.
 */
class PendingPushes {
  packets: Buffer[] = [];
  bytes = 0;
  ended = false;

  add(packet: Buffer | null): void {
    if (packet === null) this.ended = true;
    else if (!this.ended) {
      this.packets.push(packet);
      this.bytes += packet.length;
    }
  }

  drain(send: (packet: Buffer) => void, end: () => void): void {
    const { packets, ended } = this;
    this.packets = [];
    this.bytes = 0;
    for (const packet of packets) send(packet);
    if (ended) end();
  }
}

/**
 * What the links over the network share: the reader of what arrives, the packets pushed before
 * the connection exists, TLS options that may still have to be made (a station's certificate is
 * read as its connection opens), and how a close reaches the client, once.
 */
export abstract class NetworkLink implements Link {
  protected readonly client: LinkOwner;
  protected readonly reader: PacketReader;
  protected readonly waiting = new PendingPushes();
  protected closed = false;

  constructor(client: LinkOwner) {
    this.client = client;
    this.reader = new PacketReader(client, () => !this.closed);
  }

  /** Calls `connect` with `options`, made first when they come as a function; a failure to make them closes the link. */
  protected connectWith(options: TlsSource | undefined, connect: (options: tls.ConnectionOptions | undefined) => void): void {
    if (typeof options !== 'function') {
      connect(options);
      return;
    }
    options().then(
      (made) => {
        if (!this.closed) connect(made);
      },
      (error: Error) => this.close(error),
    );
  }

  protected close(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.reader.clear();
    if (error) this.client.onLinkError(error);
    this.client.onLinkClosed(this);
  }

  abstract push(packet: Buffer | null): void;
  abstract destroy(error?: Error): void;
  abstract backlog(): number;
}
