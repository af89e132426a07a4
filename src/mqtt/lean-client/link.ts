/** What the lean client and its links (the ways its packets reach a broker) know of each other. */
import type { IncomingPacket } from '../packet-codec.js';

/** The client's end of its connection to the broker: one packet a push, `null` after DISCONNECT. */
export interface Link {
  push(packet: Buffer | null): unknown;
  destroy(error?: Error): unknown;
  /**
   * Bytes pushed that have not gone out yet (the socket's or WebSocket's send buffer, and what
   * waits for the connection to open), for backpressure; 0 for links in memory, whose pushes are
   * taken at once. A link with a backlog calls the client's `onLinkDrain` once it has sent it.
   */
  backlog(): number;
}

/** What a link calls back on its client (`LeanMqttClient`): each packet read, an error, the close, a drain. */
export interface LinkOwner {
  /** The largest packet, with its fixed header, the client takes from the broker. */
  readonly maxIncomingPacketBytes: number;
  /** One whole packet from the broker. */
  onPacket(packet: IncomingPacket): void;
  onLinkError(error: Error): void;
  /** The link closed, whoever closed it; told once. */
  onLinkClosed(link: Link): void;
  /** A link with a backlog sent it (see `Link.backlog`). */
  onLinkDrain(link: Link): void;
}

/**
 * Shapes a network link as a real one would be (src/mqtt/link-shaping.ts): `open` makes the link
 * itself, told an owner that hears what arrives only once the shaper delivers it.
 */
export interface LinkShaper {
  shape(owner: LinkOwner, open: (owner: LinkOwner) => Link): Link;
}
