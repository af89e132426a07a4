/**
 * The links of a client to a broker in this process (a `memory` target): a Duplex stream the broker
 * handles, or the broker's own `attach` when it runs on another thread.
 */
import { Duplex } from 'node:stream';
import type { LinkEnd, LinkPeer } from '../broker-link.js';
import { endForReader, readerBehind } from '../../shared/end-for-reader.js';
import type { Link, LinkOwner } from './link.js';
import { PacketReader } from './packet-reader.js';

/**
 * The broker's end of the connection: a real Duplex, as `aedes.handle` expects. What the broker
 * writes is parsed for the client at once; what the client sends is pushed as one chunk a packet.
 */
export class BrokerLink extends Duplex implements Link {
  readonly #client: LinkOwner;
  readonly #reader: PacketReader;
  #closed = false;
  /** The client dropped the connection before the broker had read all it sent. */
  #dropped = false;

  constructor(client: LinkOwner) {
    super({ allowHalfOpen: false });
    this.#client = client;
    this.#reader = new PacketReader(client, () => !this.#closed);
  }

  override _read(): void {}

  backlog(): number {
    return 0;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#receive(chunk);
    callback();
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    this.#receive(chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map(({ chunk }) => chunk)));
    callback();
  }

  #receive(chunk: Buffer): void {
    const error = this.#reader.feed(chunk);
    if (error) this.destroy(error);
  }

  /**
   * The client drops the connection with `destroy`, and the broker closes it with `destroy` too.
   * While the broker has not read all the client sent, the first call is the client's drop, and
   * it acts as a TCP connection that closes after its data: the client hears of the close at once,
   * the broker reads what came before (a last PUBLISH) and then an end without DISCONNECT, a lost
   * connection (MQTT 3.1.1 §4.6; the last will fires), and nothing goes back. The broker's own
   * `destroy` when it is done, or DROP_GRACE_MS (end-for-reader.ts), ends the stream.
   */
  override destroy(error?: Error): this {
    if (this.#dropped || this.destroyed || !readerBehind(this)) return super.destroy(error);
    this.#dropped = true;
    this.#close(error ?? null);
    endForReader(this, () => super.destroy());
    return this;
  }

  override _final(callback: (error?: Error | null) => void): void {
    callback();
    this.destroy();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#close(error);
    callback(error);
  }

  #close(error: Error | null): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#reader.clear();
    if (error) this.#client.onLinkError(error);
    this.#client.onLinkClosed(this);
  }
}

/**
 * A connection through a broker's `attach` (a broker on another thread): no stream on this side,
 * since the bytes cross to the broker's thread in batches anyway. It behaves as `BrokerLink` does:
 * the client hears of a close it caused on a later microtask, as it would from a stream.
 */
export class DirectLink implements Link, LinkPeer {
  readonly #client: LinkOwner;
  readonly #reader: PacketReader;
  readonly #end: LinkEnd;
  #closed = false;

  constructor(client: LinkOwner, attach: (peer: LinkPeer) => LinkEnd) {
    this.#client = client;
    this.#reader = new PacketReader(client, () => !this.#closed);
    this.#end = attach(this);
  }

  backlog(): number {
    return 0;
  }

  push(packet: Buffer | null): void {
    if (this.#closed) return;
    if (packet) {
      this.#end.send(packet);
      return;
    }
    this.#end.end();
    this.#close();
  }

  destroy(error?: Error): void {
    if (this.#closed) return;
    this.#end.destroy();
    this.#close(error);
  }

  receive(bytes: Buffer): void {
    const error = this.#reader.feed(bytes);
    if (error) this.destroy(error);
  }

  closed(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#reader.clear();
    if (error) this.#client.onLinkError(error);
    this.#client.onLinkClosed(this);
  }

  #close(error?: Error): void {
    this.#closed = true;
    this.#reader.clear();
    queueMicrotask(() => {
      if (error) this.#client.onLinkError(error);
      this.#client.onLinkClosed(this);
    });
  }
}
