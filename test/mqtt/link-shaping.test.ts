/**
 * A station's link (src/mqtt/link-shaping.ts) on a manual clock: every chunk arrives after the
 * link's latency, in order, behind the chunks before it at the link's bandwidth, later by a
 * retransmission timeout when lost; a half-open link carries nothing, not even a close.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.js';
import { LinkControl } from '../../src/mqtt/link-shaping.js';
import { LINK_PROFILES, describeLink, resolveLink, type LinkConditions } from '../../src/fixture/link-schema.js';
import type { LinkEnd, LinkPeer, StreamAcceptor } from '../../src/mqtt/broker-link.js';

/** A broker that records what reaches it, on the clock's time, and can answer. */
function fakeBroker(clock: ManualClock) {
  const received: { at: number; bytes: string }[] = [];
  const events: string[] = [];
  let client: LinkPeer | undefined;
  const acceptor: StreamAcceptor = {
    handle: () => {
      throw new Error('not used');
    },
    attach: (peer): LinkEnd => {
      client = peer;
      return {
        send: (packet) => received.push({ at: clock.now(), bytes: packet.toString() }),
        end: () => events.push(`end at ${clock.now()}`),
        destroy: () => events.push(`destroy at ${clock.now()}`),
      };
    },
  };
  return { acceptor, received, events, answer: (text: string) => client!.receive(Buffer.from(text)), close: () => client!.closed() };
}

function connect(conditions: LinkConditions | undefined, draw: () => number = () => 0.5) {
  const clock = new ManualClock(0);
  const link = new LinkControl({ conditions, clock, draw });
  const broker = fakeBroker(clock);
  const heard: { at: number; bytes: string }[] = [];
  const closes: number[] = [];
  const end = link.acceptor(broker.acceptor).attach!({ receive: (bytes) => heard.push({ at: clock.now(), bytes: bytes.toString() }), closed: () => closes.push(clock.now()) });
  return { clock, link, broker, end, heard, closes };
}

describe('a shaped link', () => {
  it('delays each chunk by the latency both ways, jitter around it, never out of order', async () => {
    const { clock, broker, end, heard } = connect(resolveLink({ latencyMs: 100 }));
    end.send(Buffer.from('connect'));
    await clock.advance(99);
    expect(broker.received).toEqual([]);
    await clock.advance(1);
    expect(broker.received).toEqual([{ at: 100, bytes: 'connect' }]);
    broker.answer('connack');
    await clock.advance(100);
    expect(heard).toEqual([{ at: 200, bytes: 'connack' }]);

    // Jitter of ±50 ms: a draw of 0.9 makes the first chunk late, 0.1 the second early; the second waits.
    const draws = [0.9, 0.1];
    const jittered = connect(resolveLink({ latencyMs: 100, jitterMs: 50 }), () => draws.shift() ?? 0.5);
    jittered.end.send(Buffer.from('first'));
    jittered.end.send(Buffer.from('second'));
    await jittered.clock.advance(1000);
    expect(jittered.broker.received).toEqual([
      { at: 140, bytes: 'first' },
      { at: 140, bytes: 'second' },
    ]);
  });

  it('queues chunks at the bandwidth', async () => {
    // 8 kbit/s: a 100-byte chunk takes 100 ms to send.
    const { clock, broker, end } = connect(resolveLink({ bandwidthKbps: 8 }));
    end.send(Buffer.alloc(100, 'a'));
    end.send(Buffer.alloc(100, 'b'));
    await clock.advance(1000);
    expect(broker.received.map((chunk) => chunk.at)).toEqual([100, 200]);
  });

  it('holds a lost segment back by a retransmission timeout, doubling while it is lost again', async () => {
    // 50 % loss; draws: lost, lost, through. RTO max(200, 2 × 10) = 200, then 400.
    const draws = [0.1, 0.2, 0.9];
    const { clock, broker, end } = connect(resolveLink({ latencyMs: 10, lossPercent: 50 }), () => draws.shift() ?? 0.99);
    end.send(Buffer.from('publish'));
    await clock.advance(609);
    expect(broker.received).toEqual([]);
    await clock.advance(1);
    expect(broker.received).toEqual([{ at: 610, bytes: 'publish' }]);
  });

  it('carries a close after the bytes before it', async () => {
    const { clock, broker, end } = connect(resolveLink({ latencyMs: 50 }));
    end.send(Buffer.from('disconnect'));
    end.end();
    await clock.advance(50);
    expect(broker.received).toEqual([{ at: 50, bytes: 'disconnect' }]);
    expect(broker.events).toEqual(['end at 50']);
  });

  it('half-open carries nothing either way, not even a close, and a connection that went half-open stays so', async () => {
    const { clock, link, broker, end, heard, closes } = connect(resolveLink({ latencyMs: 20 }));
    end.send(Buffer.from('pingreq'));
    // On its way when the link goes half-open: lost.
    link.set(LINK_PROFILES['half-open']);
    broker.answer('pingresp');
    broker.close();
    end.destroy();
    await clock.advance(10_000);
    expect(broker.received).toEqual([]);
    expect(heard).toEqual([]);
    expect(closes).toEqual([]);
    expect(broker.events).toEqual([]);
    // The link heals: this connection stays dead, a new one carries again.
    link.set(LINK_PROFILES.perfect);
    const fresh = link.acceptor(broker.acceptor).attach!({ receive: () => {}, closed: () => {} });
    fresh.send(Buffer.from('connect'));
    expect(broker.received).toEqual([{ at: 10_000, bytes: 'connect' }]);
  });

  it('a perfect link passes chunks at once, behind any still on their way', async () => {
    const { clock, link, broker, end } = connect(resolveLink('perfect'));
    end.send(Buffer.from('now'));
    expect(broker.received).toEqual([{ at: 0, bytes: 'now' }]);
    link.set(resolveLink({ latencyMs: 100 }));
    end.send(Buffer.from('slow'));
    link.set(LINK_PROFILES.perfect);
    end.send(Buffer.from('after'));
    expect(broker.received).toHaveLength(1);
    await clock.advance(100);
    expect(broker.received.map((chunk) => chunk.bytes)).toEqual(['now', 'slow', 'after']);
  });
});

describe('link profiles', () => {
  it('resolve from a name, from figures, and from a name with figures changed', () => {
    expect(resolveLink('lte-m')).toEqual(LINK_PROFILES['lte-m']);
    expect(resolveLink({ latencyMs: 300, lossPercent: 2 })).toEqual({ profile: 'custom', latencyMs: 300, jitterMs: 0, lossPercent: 2, bandwidthKbps: 0, halfOpen: false });
    expect(resolveLink({ profile: 'nb-iot', lossPercent: 10 })).toEqual({ ...LINK_PROFILES['nb-iot'], lossPercent: 10 });
  });

  it('describe themselves in a few words', () => {
    expect(describeLink(LINK_PROFILES['lte-m'])).toBe('lte-m (75 ± 25 ms, 1 % loss, 375 kbit/s)');
    expect(describeLink(LINK_PROFILES['half-open'])).toBe('half-open (carries nothing)');
    expect(describeLink(undefined)).toBe('perfect');
  });
});
