/**
 * The station's reconnect backoff and session watch, without a broker: the delay doubles with
 * jitter up to the longest and starts again only after a session that lasted; a session closed
 * soon after its CONNACK, again and again, is said once to be taken over.
 */
import { describe, expect, it } from 'vitest';
import type { Duplex } from 'node:stream';
import { FleetReconnect, ReconnectBackoff } from '../../src/mqtt/reconnect-policy.js';
import { ReconnectTimers } from '../../src/mqtt/reconnect-timers.js';
import { SessionWatch, TAKEN_OVER_AFTER, type StationLinkEvent } from '../../src/mqtt/session-watch.js';
import { StationClient } from '../../src/mqtt/station-client.js';
import type { MqttTransport } from '../../src/mqtt/transport.js';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { ManualClock } from '../../src/shared/clock.js';
import { reconnectRandom, seededRandom } from '../../src/station/random.js';

describe('ReconnectBackoff', () => {
  it('draws each delay from the whole window (full jitter), the window doubling up to the longest', () => {
    const backoff = new ReconnectBackoff({ firstMs: 100, maxMs: 1000, random: seededRandom(7) });
    expect(backoff.delayMs).toBe(100);
    const drawn: number[] = [];
    for (let attempt = 1; attempt <= 12; attempt += 1) {
      backoff.grow();
      const window = Math.min(100 * 2 ** attempt, 1000);
      expect(backoff.delayMs).toBeGreaterThanOrEqual(0);
      expect(backoff.delayMs).toBeLessThanOrEqual(window);
      drawn.push(backoff.delayMs);
    }
    // Spread over the window, not bunched at its top as "half plus jitter" was.
    expect(Math.min(...drawn.slice(4))).toBeLessThan(500);
    backoff.reset();
    expect(backoff.delayMs).toBe(100);
  });

  it('draws from its own stream only', () => {
    let draws = 0;
    const backoff = new ReconnectBackoff({ firstMs: 100, maxMs: 1000, random: { int: (min) => (draws += 1, min) } });
    backoff.grow();
    backoff.grow();
    expect(draws).toBe(2);
  });
});

describe('SessionWatch', () => {
  it('says takenOver once after sessions closed soon, each followed by an accepted reconnect', () => {
    let now = 0;
    const watch = new SessionWatch({ token: 'T', clientId: 'station-sim-T', maxReconnectMs: 400, wallClock: () => now });
    const events: StationLinkEvent[] = [];
    watch.onLinkEvent((event) => events.push(event));
    const connection = watch.connection();
    for (let i = 0; i <= TAKEN_OVER_AFTER + 1; i += 1) {
      connection.connected();
      now += 10;
      expect(connection.closed(false, true)).toBe(false);
    }
    expect(events.filter((event) => event.kind === 'takenOver')).toEqual([{ kind: 'takenOver', token: 'T', clientId: 'station-sim-T', closes: TAKEN_OVER_AFTER }]);
    const late: StationLinkEvent[] = [];
    watch.onLinkEvent((event) => late.push(event));
    expect(late).toEqual([{ kind: 'takenOver', token: 'T', clientId: 'station-sim-T', closes: TAKEN_OVER_AFTER + 1 }]);
  });

  it('counts a session that lasted, or that the station ended, as one the backoff starts again after', () => {
    let now = 0;
    const watch = new SessionWatch({ token: 'T', clientId: 'c', maxReconnectMs: 400, wallClock: () => now });
    const events: StationLinkEvent[] = [];
    watch.onLinkEvent((event) => events.push(event));
    const connection = watch.connection();
    connection.connected();
    now += 60_000;
    expect(connection.closed(false, true)).toBe(true);
    connection.failed(new Error('ECONNREFUSED'));
    expect(connection.closed(false, true)).toBe(false);
    connection.connected();
    expect(watch.sessionUp).toBe(true);
    expect(connection.closed(true, true)).toBe(true);
    expect(watch.sessionUp).toBe(false);
    expect(events).toEqual([
      { kind: 'up' },
      { kind: 'down', deliberate: false },
      { kind: 'retryFailed', reason: 'ECONNREFUSED' },
      { kind: 'up' },
      { kind: 'down', deliberate: true },
    ]);
  });
});

describe('FleetReconnect', () => {
  it('grows its window with the fleet, from the smallest up to the backoff’s widest', () => {
    const fleet = new FleetReconnect({ maxMs: 15_000 });
    const join = (count: number) => {
      for (let i = 0; i < count; i += 1) fleet.join({ reconnectWithin: () => undefined });
    };
    join(5);
    expect(fleet.windowMs).toBe(1000);
    join(1995);
    expect(fleet.windowMs).toBe(2000);
    join(98_000);
    expect(fleet.windowMs).toBe(15_000);
  });

  it('tells every other station once per outage, when the broker accepts the first one again', () => {
    const fleet = new FleetReconnect({ maxMs: 15_000 });
    const told: [string, number][] = [];
    const station = (name: string) => ({ reconnectWithin: (windowMs: number) => told.push([name, windowMs]) });
    const [a, b, c] = [station('a'), station('b'), station('c')];
    for (const s of [a, b, c]) fleet.join(s);
    fleet.answered(a); // no outage yet: a station's first connection
    expect(told).toEqual([]);
    fleet.failed();
    fleet.failed();
    fleet.answered(b);
    fleet.answered(c);
    expect(told).toEqual([
      ['a', 1000],
      ['c', 1000],
    ]);
  });
});

describe('ReconnectTimers', () => {
  it('brings the reconnect timer forward, and only it', async () => {
    const clock = new ManualClock();
    const timers = new ReconnectTimers(clock);
    const fired: string[] = [];
    timers.setTimeout(() => fired.push('keepalive'), 5000);
    timers.markNext();
    const reconnect = timers.setTimeout(() => fired.push('reconnect'), 12_000);
    expect(timers.reconnectInMs).toBe(12_000);
    expect(timers.reconnectWithin(20_000)).toBe(false); // due sooner already
    expect(timers.reconnectWithin(300)).toBe(true);
    clock.advance(300);
    expect(fired).toEqual(['reconnect']);
    expect(timers.reconnectInMs).toBeUndefined();
    clock.advance(5000);
    expect(fired).toEqual(['reconnect', 'keepalive']);
    // A reconnect cleared by the client (it ended) stays cleared, brought forward or not.
    timers.markNext();
    const next = timers.setTimeout(() => fired.push('second reconnect'), 10_000);
    timers.reconnectWithin(100);
    timers.clearTimeout(next);
    timers.clearTimeout(reconnect);
    clock.advance(20_000);
    expect(fired).toEqual(['reconnect', 'keepalive']);
  });
});

describe('a small fleet after a long broker outage, on fake time', () => {
  const TOKENS = ['R-1', 'R-2', 'R-3', 'R-4', 'R-5'];
  const configs = parseFixture({ defaults: { heartbeatMs: 0 }, stations: TOKENS.map((token, index) => ({ token, stationId: index + 1, locks: [{ lockId: '1' }] })) }).stations;

  /** Real I/O of the in-memory links between steps of fake time. */
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
  };

  /**
   * 5 stations on an embedded broker that goes away for `outageMs` (every link dropped, every new
   * one refused), on a fake link clock stepped by `STEP_MS`; returns when each station came back,
   * in ms after the broker did.
   */
  async function recovery(options: { fleet: boolean; seed: number; outageMs: number }): Promise<number[]> {
    const broker = await startEmbeddedBroker({ port: 0 });
    const STEP_MS = 50;
    let down = false;
    const links: Duplex[] = [];
    const transport: MqttTransport = {
      kind: 'memory',
      broker: {
        handle: (stream) => {
          // Refused as a broker that is not there: the connection fails after it was opened.
          if (down) return void setImmediate(() => stream.destroy());
          links.push(stream);
          broker.handle(stream);
        },
      },
    };
    const linkClock = new ManualClock();
    const fleetReconnect = options.fleet ? new FleetReconnect({ maxMs: 15_000 }) : undefined;
    const stations = configs.map(
      (config) =>
        new StationClient({
          config,
          transport,
          clock: new ManualClock(),
          linkClock,
          random: seededRandom(options.seed, config.stationId),
          reconnectRandom: reconnectRandom(options.seed, config.stationId),
          ...(fleetReconnect ? { fleetReconnect } : {}),
        }),
    );
    try {
      await Promise.all(stations.map((station) => station.start()));
      down = true;
      for (const link of links.splice(0)) link.destroy();
      for (let waited = 0; waited < options.outageMs; waited += STEP_MS) {
        await settle();
        linkClock.advance(STEP_MS);
      }
      down = false;
      const back = new Map<string, number>();
      // At most the widest window and one more step: every station has come back by then.
      for (let waited = 0; waited <= 15_000 + STEP_MS && back.size < stations.length; waited += STEP_MS) {
        await settle();
        for (const station of stations) if (station.connected && !back.has(station.token)) back.set(station.token, waited);
        linkClock.advance(STEP_MS);
      }
      expect(back.size).toBe(stations.length);
      return [...back.values()].sort((a, b) => a - b);
    } finally {
      await Promise.all(stations.map((station) => station.kill()));
      await broker.stop();
    }
  }

  it('comes back within the recovery window of the first station the broker takes back', async () => {
    for (const seed of [1, 2, 3]) {
      const times = await recovery({ fleet: true, seed, outageMs: 30_000 });
      // The first came back at its own backoff; the rest within the 1 s window after it (and a step).
      expect(times.at(-1)! - times[0]!, `seed ${seed}: ${times.join(', ')}`).toBeLessThanOrEqual(1000 + 100);
      console.info(`seed ${seed}, with the fleet's recovery window: back after ${times.join(', ')} ms`);
      const alone = await recovery({ fleet: false, seed, outageMs: 30_000 });
      console.info(`seed ${seed}, each station on its own backoff: back after ${alone.join(', ')} ms`);
    }
  }, 120_000);
});
