/**
 * A station's link to its broker, shaped as a real one would be (docs/links.md): every
 * chunk of an MQTT connection is delayed by the link's latency and jitter, queued behind the
 * chunks before it at the link's bandwidth, and held back by a retransmission timeout when its
 * segment is lost, in both directions and always in order, as TCP delivers. A half-open link
 * carries nothing, not even the close: each end finds out by its keepalive.
 *
 * In memory it wraps the broker's `StreamAcceptor` for one station; over TCP, TLS or WebSocket it
 * wraps the lean client's own connection (`shape`), between the client and its socket. Either way
 * the lean client and the broker are as they are on a perfect link, and a station with no link
 * conditions is not wrapped at all and pays nothing. The conditions can change while the station
 * runs (`LinkControl.set`): chunks already on their way keep their timing, later ones get the new
 * one.
 */
import { Duplex } from 'node:stream';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { isPerfect, type LinkConditions } from '../fixture/link-schema.js';
import type { LinkEnd, LinkPeer, StreamAcceptor } from './broker-link.js';
import type { Link, LinkOwner, LinkShaper } from './lean-client/link.js';
import type { IncomingPacket } from './packet-codec.js';

/** Linux's minimum retransmission timeout (TCP_RTO_MIN, 200 ms). */
const MIN_RTO_MS = 200;
/** A segment lost this many times in a row is taken as through on the next try (TCP gives up far later). */
const MAX_RETRANSMISSIONS = 6;

/** The link of one station: its conditions now, changeable while it runs. */
export class LinkControl implements LinkShaper {
  #conditions: LinkConditions | undefined;
  /** The conditions, when they shape anything: undefined on a perfect link. */
  #shaping: LinkConditions | undefined;
  readonly clock: Clock;
  /** A uniform number in [0, 1): the station's own seeded stream, so a run replays. */
  readonly draw: () => number;
  readonly #connections = new Set<ShapedConnection>();

  constructor(options: { conditions: LinkConditions | undefined; clock: Clock; draw: () => number }) {
    this.#conditions = options.conditions;
    this.#shaping = options.conditions && !isPerfect(options.conditions) ? options.conditions : undefined;
    this.clock = options.clock;
    this.draw = options.draw;
  }

  get conditions(): LinkConditions | undefined {
    return this.#conditions;
  }

  /** The conditions when they shape anything; undefined on a perfect link. */
  get shaping(): LinkConditions | undefined {
    return this.#shaping;
  }

  /** New conditions from now on (undefined: a perfect link). Open connections go half-open with the link, never back. */
  set(conditions: LinkConditions | undefined): void {
    this.#conditions = conditions;
    this.#shaping = conditions && !isPerfect(conditions) ? conditions : undefined;
    if (conditions?.halfOpen) for (const connection of this.#connections) connection.goHalfOpen();
  }

  /** The broker as this station reaches it: through the link. */
  acceptor(broker: StreamAcceptor): StreamAcceptor {
    return {
      handle: (stream) => broker.handle(stream),
      attach: (peer) => this.#attach(broker, peer),
      canGoSilent: true,
    };
  }

  /**
   * A network connection (TCP, TLS, WebSocket) of the station through the link (`LinkShaper`): what
   * the client sends waits its time before it is written to the socket, and what the socket reads
   * waits its time before the client hears it. A close the client makes itself it knows at once;
   * one from the far end travels like the bytes, and a half-open link carries neither.
   */
  shape(owner: LinkOwner, open: (owner: LinkOwner) => Link): Link {
    const connection = new ShapedConnection(this);
    this.#connections.add(connection);
    let destroyedHere = false;
    let innerClosed = false;
    let closedTold = false;
    const tellClosed = (): void => {
      if (closedTold) return;
      closedTold = true;
      this.#connections.delete(connection);
      owner.onLinkClosed(shaped);
    };
    const inner = open({
      maxIncomingPacketBytes: owner.maxIncomingPacketBytes,
      // Nothing reaches a client after it heard of the close.
      onPacket: (packet) => connection.down.carry(incomingSize(packet), () => closedTold || owner.onPacket(packet)),
      onLinkError: (error) => (destroyedHere ? owner.onLinkError(error) : connection.down.carry(undefined, () => owner.onLinkError(error))),
      onLinkClosed: () => {
        innerClosed = true;
        if (destroyedHere) tellClosed();
        else connection.down.carry(undefined, tellClosed);
      },
      onLinkDrain: () => owner.onLinkDrain(shaped),
    });
    let unsent = 0;
    const shaped: Link = {
      push: (packet) => {
        const size = packet?.length ?? 0;
        unsent += size;
        connection.up.carry(packet ? size : undefined, () => {
          unsent -= size;
          inner.push(packet);
        });
      },
      destroy: (error) => {
        destroyedHere = true;
        // The socket may have closed already, its close held back by the link (half-open): the
        // client that drops its connection knows it is gone, as it would from its own socket.
        if (innerClosed) queueMicrotask(tellClosed);
        else inner.destroy(error);
      },
      backlog: () => inner.backlog() + unsent,
    };
    return shaped;
  }

  #attach(broker: StreamAcceptor, peer: LinkPeer): LinkEnd {
    const connection = new ShapedConnection(this);
    this.#connections.add(connection);
    const forget = (): void => {
      this.#connections.delete(connection);
    };
    const toClient: LinkPeer = {
      receive: (bytes) => connection.down.carry(bytes.length, () => peer.receive(bytes)),
      closed: (error) => {
        connection.down.carry(undefined, () => {
          forget();
          peer.closed(error);
        });
      },
    };
    const end = broker.attach ? broker.attach(toClient) : attachByStream(broker, toClient);
    return {
      send: (packet) => connection.up.carry(packet.length, () => end.send(packet)),
      end: () => connection.up.carry(undefined, () => end.end()),
      // A dropped socket: the broker hears of it (a reset travels too), unless the link carries nothing.
      destroy: () => {
        forget();
        connection.up.carry(undefined, () => end.destroy());
      },
    };
  }
}

/** About how many bytes a packet took on the wire, for the link's bandwidth. */
function incomingSize(packet: IncomingPacket): number {
  return packet.cmd === 'publish' ? 5 + Buffer.byteLength(packet.topic) + packet.payload.length : 4;
}

/** One connection over the link: a queue each way. */
class ShapedConnection {
  readonly up: Direction;
  readonly down: Direction;
  #halfOpen: boolean;

  constructor(link: LinkControl) {
    this.#halfOpen = link.conditions?.halfOpen === true;
    this.up = new Direction(link, () => this.#halfOpen);
    this.down = new Direction(link, () => this.#halfOpen);
  }

  goHalfOpen(): void {
    this.#halfOpen = true;
  }
}

/** One direction of a connection: when its last chunk arrives and its capacity is free again. */
class Direction {
  readonly #link: LinkControl;
  readonly #halfOpen: () => boolean;
  /** When the link's capacity is free for the next chunk. */
  #busyUntil = 0;
  /** When the last chunk is delivered: none overtakes it. */
  #lastArrival = 0;
  readonly #timers = new Set<TimerHandle>();

  constructor(link: LinkControl, halfOpen: () => boolean) {
    this.#link = link;
    this.#halfOpen = halfOpen;
  }

  /** Delivers `size` bytes (undefined: a close, which takes no capacity) by calling `deliver` when they arrive. */
  carry(size: number | undefined, deliver: () => void): void {
    const conditions = this.#link.shaping;
    if (this.#halfOpen()) return;
    if (!conditions) {
      // A perfect link now, but chunks sent before may still be on their way: none is overtaken.
      if (this.#timers.size === 0) deliver();
      else this.#at(this.#lastArrival, deliver);
      return;
    }
    const clock = this.#link.clock;
    const now = clock.now();
    const start = Math.max(now, this.#busyUntil);
    const sending = size !== undefined && conditions.bandwidthKbps > 0 ? (size * 8) / conditions.bandwidthKbps : 0;
    this.#busyUntil = start + sending;
    const jitter = conditions.jitterMs > 0 ? (this.#link.draw() * 2 - 1) * conditions.jitterMs : 0;
    let arrival = this.#busyUntil + Math.max(0, conditions.latencyMs + jitter);
    if (size !== undefined && conditions.lossPercent > 0) arrival += this.#retransmissionDelay(conditions);
    this.#at(Math.max(arrival, this.#lastArrival), deliver);
  }

  /** What lost transmissions of one segment add: an RTO for each, doubling (RFC 6298, 5.5). */
  #retransmissionDelay(conditions: LinkConditions): number {
    let rto = Math.max(MIN_RTO_MS, 2 * (conditions.latencyMs + conditions.jitterMs));
    let delay = 0;
    for (let lost = 0; lost < MAX_RETRANSMISSIONS && this.#link.draw() * 100 < conditions.lossPercent; lost += 1) {
      delay += rto;
      rto *= 2;
    }
    return delay;
  }

  #at(arrival: number, deliver: () => void): void {
    this.#lastArrival = arrival;
    const clock = this.#link.clock;
    const handle: TimerHandle = clock.setTimeout(() => {
      this.#timers.delete(handle);
      // A connection that went half-open while the chunk was on its way loses it.
      if (!this.#halfOpen()) deliver();
    }, arrival - clock.now());
    this.#timers.add(handle);
  }
}

/**
 * A broker that takes only streams (aedes on the calling thread): the link's far end as a Duplex,
 * bytes in and out as they are carried.
 */
function attachByStream(broker: StreamAcceptor, peer: LinkPeer): LinkEnd {
  let closed = false;
  const close = (error?: Error): void => {
    if (closed) return;
    closed = true;
    peer.closed(error);
  };
  const stream = new Duplex({
    allowHalfOpen: false,
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      if (!closed) peer.receive(chunk);
      callback();
    },
    final(callback) {
      callback();
      close();
    },
    destroy(error, callback) {
      close(error ?? undefined);
      callback(error);
    },
  });
  broker.handle(stream);
  return {
    send: (packet) => {
      if (!stream.destroyed) stream.push(packet);
    },
    end: () => {
      closed = true;
      stream.push(null);
    },
    destroy: () => {
      closed = true;
      stream.destroy();
    },
  };
}
