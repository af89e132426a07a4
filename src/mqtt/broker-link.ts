/**
 * How a client and an in-process broker are linked: the interfaces the broker offers (a stream
 * acceptor, an attached link without a stream, a tap on routed messages) and the lean client uses.
 *
 * They are a module of their own so that the lean client and transport.ts, which creates lean
 * clients, both import them without importing each other; the broker
 * implements them and imports nothing else from mqtt/.
 */
import type { Duplex } from 'node:stream';

/**
 * A listener on the broker itself, without an MQTT session: messages matching `filters` are handed
 * over as they are routed, with no packet encoded or parsed. Only an in-process broker has one.
 * It does not replay retained messages. Resolves to a function that removes the listener.
 */
export type BrokerTap = (filters: string[], listener: (topic: string, payload: Buffer) => void) => Promise<() => Promise<void>>;

/** Anything that accepts an MQTT connection as a duplex stream, such as `aedes.handle`. */
export interface StreamAcceptor {
  handle(stream: Duplex): void;
  /**
   * Connects a client without a stream on the client's side, where the broker is not on this
   * thread anyway (broker-thread.ts): the lean client uses it when it is there.
   */
  attach?(peer: LinkPeer): LinkEnd;
  /**
   * True when a connection can die without closing (a station's shaped link, link-shaping.ts, gone
   * half-open): the client then checks it by keepalive as it checks a TCP connection.
   */
  canGoSilent?: boolean;
}

/** The client's side of an attached connection: the broker's bytes, and the end of the connection. */
export interface LinkPeer {
  receive(bytes: Buffer): void;
  /**
   * The broker closed the connection, or (with an error) can no longer be reached. Not called
   * after the client's own `end` or `destroy`.
   */
  closed(error?: Error): void;
}

/** What an attached client sends through. */
export interface LinkEnd {
  send(packet: Buffer): void;
  /** The client is done sending (after DISCONNECT); the connection closes. */
  end(): void;
  /** Drops the connection, as a lost socket would (the broker fires the last will). */
  destroy(): void;
}
