/**
 * `StationClient.goOnline` settles however its connection ends: a caller (the control plane's
 * `online` action, a reset) must never wait for ever on a connection that `goOffline`, `stop` or
 * `kill` has ended while it was opening. And the station's last will is its current session's,
 * after automatic reconnects too.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import { mosquittoAvailable, startMosquitto, type RunningMosquitto } from '../helpers/mosquitto.js';
import { startEmbeddedBroker, type StartedBroker } from '../../src/broker/embedded-broker.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { STOP_LINGER_MS, StationClient, TAKEN_OVER_AFTER, type StationLinkEvent } from '../../src/mqtt/station-client.js';
import { duplexPair } from '../../src/mqtt/duplex-pair.js';
import type { MqttTransport } from '../../src/mqtt/transport.js';
import { ManualClock, systemClock } from '../../src/shared/clock.js';
import { reconnectRandom, seededRandom } from '../../src/station/random.js';
import type { Duplex } from 'node:stream';
import { eventually } from '../helpers/eventually.js';

const [config] = parseFixture({
  defaults: { heartbeatMs: 0 },
  stations: [{ token: 'SC-1', stationId: 1, initialStatus: 'offline', locks: [{ lockId: '1' }] }],
}).stations;

/** A broker that takes connections and never answers them: a connection that stays "opening". */
const silentBroker: MqttTransport = { kind: 'memory', broker: { handle: () => undefined } };

function station(transport: MqttTransport): StationClient {
  return new StationClient({ config: config!, transport, clock: new ManualClock(), random: seededRandom(1) });
}

/**
 * How a promise stands once the microtasks queued so far have run (a `setImmediate` comes after all
 * of them). Every promise asked about here is settled, if at all, by a call the test has already
 * awaited (`goOffline`, `stop`, `kill`), or never (the silent broker answers nothing).
 */
async function state(promise: Promise<unknown>): Promise<string> {
  const seen = promise.then(
    () => 'resolved',
    (error: Error) => `rejected: ${error.message}`,
  );
  return Promise.race([seen, new Promise<string>((resolve) => setImmediate(() => resolve('pending')))]);
}

/**
 * A transport to `broker` in memory that keeps the broker's end of every link the client opens;
 * `opened(n)` resolves as the n-th link is handed over, before the broker has read a byte of it.
 */
function recordedLinks(broker: StartedBroker): { transport: MqttTransport; links: Duplex[]; opened: (n: number) => Promise<void> } {
  const links: Duplex[] = [];
  const waiting = new Map<number, () => void>();
  return {
    links,
    opened: (n) => (links.length >= n ? Promise.resolve() : new Promise((resolve) => waiting.set(n, resolve))),
    transport: {
      kind: 'memory',
      broker: {
        handle: (stream) => {
          links.push(stream);
          broker.handle(stream);
          waiting.get(links.length)?.();
        },
      },
    },
  };
}

describe('StationClient.goOnline', () => {
  let broker: StartedBroker | undefined;

  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
  });

  it.each([
    ['goOffline', 'the station went offline'],
    ['stop', 'the station stopped'],
    ['kill', 'the station was killed'],
  ] as const)('rejects when %s ends the connection it is opening', async (end, reason) => {
    const client = station(silentBroker);
    const online = client.goOnline();
    // A second call while connecting waits for the same connection.
    const again = client.goOnline();
    expect(await state(online)).toBe('pending');
    await client[end]();
    expect(await state(online)).toBe(`rejected: ${reason} before it was connected`);
    expect(await state(again)).toBe(`rejected: ${reason} before it was connected`);
    expect(client.connected).toBe(false);
  });

  it('against a real broker: offline right after online leaves the station offline, and online works again', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    const { transport, links } = recordedLinks(broker);
    const client = station(transport);
    const online = client.goOnline();
    await client.goOffline();
    expect(await state(online)).toBe('rejected: the station went offline before it was connected');
    // The abandoned connection must not bring the station up when its CONNACK or SUBACK arrives late:
    // once its link is closed, nothing more can arrive on it.
    expect(links).toHaveLength(1);
    await eventually(() => links[0]!.destroyed, { what: 'the abandoned link to close' });
    expect(client.connected).toBe(false);
    expect(client.model.status).toBe('offline');
    await client.goOnline();
    expect(client.connected).toBe(true);
    await client.stop();
  });
});

describe('StationClient last will', () => {
  let mosquitto: RunningMosquitto | undefined;
  let observer: MqttObserver | undefined;

  afterEach(async () => {
    await observer?.client.endAsync(true);
    await mosquitto?.stop();
    observer = undefined;
    mosquitto = undefined;
  });

  it.skipIf(!mosquittoAvailable())(
    "after Mosquitto restarts and the station reconnects by itself, a crash publishes the new session's lastConnection and the battery at reconnect",
    async () => {
      const running = await startMosquitto();
      mosquitto = running;
      const [online] = parseFixture({
        defaults: { heartbeatMs: 0, battery: { drainPerHourV: 0 } },
        stations: [{ token: 'WILL-1', stationId: 7, batteryVoltage: 12.6, locks: [{ lockId: '1' }] }],
      }).stations;
      // Simulated time for the payloads, real sockets and timers for the connection.
      const clock = new ManualClock();
      const client = new StationClient({
        config: online!,
        transport: { kind: 'tcp', url: running.url },
        clock,
        random: seededRandom(1),
        reconnectMs: 20,
        maxReconnectMs: 200,
      });
      await client.start();
      const firstSession = new Date(clock.now()).toISOString();

      clock.advance(60_000);
      client.model.setBattery(11.9);
      await running.restart();
      await eventually(() => client.connected, { what: 'the station to reconnect by itself' });
      const secondSession = new Date(clock.now()).toISOString();
      expect(secondSession).not.toBe(firstSession);

      observer = await MqttObserver.connect(running.url, ['stations/WILL-1/status']);
      await observer.waitFor((seen) => seen.json?.status === 'online' && seen.json.lastConnection === secondSession, 'the second session online');
      // A will cannot change during a session (MQTT 3.1.1, 3.1.2.5): this reading is not in it.
      client.model.setBattery(11.5);
      await observer.waitFor((seen) => seen.json?.batteryVoltage === 11.5, 'the battery change');
      await client.kill();
      const will = await observer.waitFor((seen) => seen.json?.status === 'offline', 'the last will');
      expect(will.json).toEqual({ stationId: 7, status: 'offline', batteryVoltage: 11.9, lastConnection: secondSession });
    },
  );

  it('the will carries the same lastConnection as the online status of its session, on real time', async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    const watcher = await MqttObserver.connect(broker.url, ['stations/WILL-2/status']);
    try {
      const [config] = parseFixture({
        defaults: { heartbeatMs: 0 },
        stations: [{ token: 'WILL-2', stationId: 8, locks: [{ lockId: '1' }] }],
      }).stations;
      const client = new StationClient({ config: config!, transport: { kind: 'tcp', url: broker.url }, clock: systemClock, random: seededRandom(1) });
      await client.start();
      const online = await watcher.waitFor((seen) => seen.json?.status === 'online', 'the online status');
      await client.kill();
      const will = await watcher.waitFor((seen) => seen.json?.status === 'offline', 'the last will');
      expect(will.json?.lastConnection).toBe(online.json?.lastConnection);
    } finally {
      await watcher.client.endAsync(true);
      await broker.stop();
    }
  });
});

describe('StationClient.reset', () => {
  let broker: StartedBroker | undefined;

  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
  });

  it('two resets at once of a station that starts offline both succeed, one after the other', async () => {
    // Each publishes the offline record over a session with the station's client id; at the same
    // time, the broker closed the first of the two sessions and that reset failed.
    broker = await startEmbeddedBroker({ port: 0 });
    const running = broker;
    const client = station({ kind: 'memory', broker: { handle: (stream) => running.handle(stream) } });
    await client.start();
    client.model.physical('1', 'jam');
    const results = await Promise.allSettled([client.reset(), client.reset(), client.reset()]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const observer = await MqttObserver.connect(running.url, ['stations/SC-1/#']);
    try {
      await observer.waitFor((seen) => seen.topic === 'stations/SC-1/locks/1/state' && seen.json?.status === 'locked', 'the reset lock state');
      await observer.waitFor((seen) => seen.topic === 'stations/SC-1/status' && seen.json?.status === 'offline', 'the offline record');
    } finally {
      await observer.client.endAsync(true);
    }
    // And a later reset runs as before.
    await client.reset();
  });

  it('a reset queued behind another does not reconnect a station stopped meanwhile', async () => {
    // stop() abandoned the reset in flight; the queued one then called goOnline on the stopped
    // station, whose session stayed up and kept the process alive.
    broker = await startEmbeddedBroker({ port: 0 });
    const { transport, links, opened } = recordedLinks(broker);
    const onlineConfig = parseFixture({ defaults: { heartbeatMs: 0 }, stations: [{ token: 'SC-2', stationId: 2, locks: [{ lockId: '1' }] }] }).stations[0]!;
    const client = new StationClient({
      config: onlineConfig,
      transport,
      clock: new ManualClock(),
      random: seededRandom(1),
    });
    await client.start();
    await client.goOffline();
    const first = client.reset();
    const second = client.reset();
    // The first reset is in flight once it has opened its connection (the second the test opened).
    await opened(2);
    await client.stop();
    expect(await state(first)).toBe('rejected: the station stopped before it was connected');
    expect(await state(second)).toBe('rejected: the station stopped before it was connected');
    // Both resets are over, and goOnline opens its link at once: every link there will be is here.
    // Once they are all closed, no session is left to come up.
    expect(links).toHaveLength(2);
    await eventually(() => links.every((link) => link.destroyed), { what: 'every link to close' });
    expect(client.connected).toBe(false);
    expect(client.sessionUp).toBe(false);
    await expect(client.goOnline()).rejects.toThrow('the station stopped before it was connected');
  });
});

describe('StationClient.stop against a broker that goes silent', () => {
  let broker: StartedBroker | undefined;

  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
  });

  it.each(['persistent', 'clean'] as const)(
    'a %s session gives up on the PUBACK of its offline status after STOP_LINGER_MS, and drops the connection',
    async (session) => {
      broker = await startEmbeddedBroker({ port: 0 });
      const running = broker;
      // Between the station and the broker, a gate that can stop passing bytes either way: the
      // broker is then still connected but says nothing, as one stopped or gone without a reset.
      let silent = false;
      const links: Duplex[] = [];
      const transport: MqttTransport = {
        kind: 'memory',
        broker: {
          handle: (stationSide) => {
            const [inner, brokerSide] = duplexPair();
            running.handle(brokerSide);
            links.push(stationSide);
            stationSide.on('data', (chunk: Buffer) => silent || inner.write(chunk));
            inner.on('data', (chunk: Buffer) => silent || stationSide.write(chunk));
          },
        },
      };
      const linkClock = new ManualClock();
      const onlineConfig = parseFixture({
        defaults: { heartbeatMs: 0 },
        stations: [{ token: 'SC-3', stationId: 3, behaviour: { session }, locks: [{ lockId: '1' }] }],
      }).stations[0]!;
      const client = new StationClient({ config: onlineConfig, transport, clock: new ManualClock(), linkClock, random: seededRandom(1) });
      await client.start();
      silent = true;
      const stopping = client.stop();
      expect(await state(stopping)).toBe('pending'); // waiting for the PUBACK of `offline`
      // In memory the link ends with the DISCONNECT; over TCP to a stopped broker that waits too
      // (test/cli/stations-stop.test.ts).
      await linkClock.advance(STOP_LINGER_MS);
      expect(await state(stopping)).toBe('resolved');
      expect(links.every((link) => link.destroyed)).toBe(true);
      expect(client.connected).toBe(false);
    },
  );
});

describe('StationClient hosted twice', () => {
  let broker: StartedBroker | undefined;

  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
  });

  it('says once that its session keeps being taken over, and backs off instead of reconnecting at once', async () => {
    // Two processes host the same station (overlapping --shard): one client id, two sessions, and
    // the broker closes the older each time the other connects (MQTT 3.1.1, section 3.1.4).
    broker = await startEmbeddedBroker({ port: 0 });
    const running = broker;
    const [online] = parseFixture({ defaults: { heartbeatMs: 0 }, stations: [{ token: 'TWIN-1', stationId: 9, locks: [{ lockId: '1' }] }] }).stations;
    // The sessions' timers (reconnect delays, keepalive) and how long a session lasted, in fake time.
    const linkClock = new ManualClock();
    const twins = [1, 2].map(
      (seed) =>
        new StationClient({
          config: online!,
          transport: { kind: 'memory', broker: { handle: (stream) => running.handle(stream) } },
          clock: new ManualClock(),
          linkClock,
          random: seededRandom(seed),
          reconnectRandom: reconnectRandom(seed, 9),
          reconnectMs: 10,
          maxReconnectMs: 400,
        }),
    );
    const events: { at: number; event: StationLinkEvent }[] = [];
    twins[0]!.onLinkEvent((event) => events.push({ at: linkClock.now(), event }));
    /** Moves the link clock on in steps of 10 ms, letting the broker answer between steps, until `done` (at most 10 s). */
    const runUntil = async (done: () => boolean): Promise<void> => {
      for (let step = 0; step < 1000 && !done(); step += 1) {
        linkClock.advance(10);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect(done()).toBe(true);
    };
    try {
      await twins[0]!.start();
      await twins[1]!.start();
      const downs = (): number[] => events.filter(({ event }) => event.kind === 'down').map(({ at }) => at);
      await runUntil(() => downs().length >= 8);
      const takenOver = events.filter(({ event }) => event.kind === 'takenOver').map(({ event }) => event);
      expect(takenOver).toEqual([{ kind: 'takenOver', token: 'TWIN-1', clientId: 'station-sim-TWIN-1', closes: TAKEN_OVER_AFTER }]);
      // Backed off: each delay is drawn from the whole window (full jitter), which has grown to the
      // longest (400 ms), not the 10 ms a CONNACK used to reset it to. One draw may be short; four
      // together are not (from 0..400 ms each, under 200 ms in all once in ~400 runs; seeded here).
      await runUntil(() => downs().length >= 13);
      const gaps = downs()
        .slice(8, 12)
        .map((down) => events.find(({ at, event }) => event.kind === 'up' && at >= down)!.at - down);
      expect(gaps.reduce((sum, gap) => sum + gap, 0)).toBeGreaterThanOrEqual(200);
      // A listener added later hears it at once.
      const late: StationLinkEvent[] = [];
      twins[0]!.onLinkEvent((event) => late.push(event));
      expect(late[0]).toMatchObject({ kind: 'takenOver', token: 'TWIN-1' });
    } finally {
      await Promise.all(twins.map((twin) => twin.kill()));
    }
  });
});
