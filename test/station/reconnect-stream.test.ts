/**
 * The reconnect backoff draws its jitter from a stream of its own (`reconnectRandom`): a reconnect
 * does not shift the station model's next unlock delay, so the same seed replays the same run
 * whether or not the connection dropped in between (STYLE.md: "a reconnect must not shift the next
 * unlock delay").
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { StationClient } from '../../src/mqtt/station-client.js';
import { ManualClock } from '../../src/shared/clock.js';
import { reconnectRandom, seededRandom, type Random } from '../../src/station/random.js';
import { startTestBroker, type TestBroker } from '../helpers/test-broker.js';
import { eventually } from '../helpers/eventually.js';

const [config] = parseFixture({
  defaults: { heartbeatMs: 0, unlockDelayMs: { min: 100, max: 5000 }, relockMs: 1000 },
  stations: [{ token: 'RS-1', stationId: 11, locks: [{ lockId: '1' }] }],
}).stations;

const SEED = 42;
let broker: TestBroker | undefined;
let station: StationClient | undefined;

afterEach(async () => {
  await station?.stop();
  await broker?.stop();
  station = undefined;
  broker = undefined;
});

/** The unlock delays of six unlocks, with the broker dropping the station's connection after the third when `reconnect`. */
async function unlockDelays(reconnect: boolean, streams: { random: Random; reconnectRandom: Random }): Promise<number[]> {
  broker = await startTestBroker();
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
  station = new StationClient({ config: config!, transport: { kind: 'tcp', url: broker.url }, clock, ...streams, reconnectMs: 20, maxReconnectMs: 100 });
  await station.start();
  const delays: number[] = [];
  for (let i = 0; i < 6; i += 1) {
    if (reconnect && i === 3) {
      const reconnected = new Promise<void>((resolve) => station!.onLinkEvent((event) => event.kind === 'up' && resolve()));
      broker.dropClients();
      await eventually(() => !station!.connected, { what: 'the station to lose its connection' });
      await reconnected;
    }
    station.model.handleUnlock('1', `c${i}`);
    const timer = station.model.snapshot().timers.find((entry) => entry.kind === 'unlock');
    delays.push(Date.parse(timer!.dueAt) - clock.now());
    clock.advance(10_000); // open, relocked, idle
  }
  await station.stop();
  await broker.stop();
  station = undefined;
  broker = undefined;
  return delays;
}

describe('reconnect jitter stream', () => {
  it('the same seed gives the same unlock delays with and without a reconnect in between', async () => {
    const seeded = () => ({ random: seededRandom(SEED, 11), reconnectRandom: reconnectRandom(SEED, 11) });
    const calm = await unlockDelays(false, seeded());
    const dropped = await unlockDelays(true, seeded());
    expect(dropped).toEqual(calm);
    expect(new Set(calm).size).toBeGreaterThan(1); // the delays are drawn, not a constant
  });

  it('(the check above can fail: with one shared stream, the reconnect shifts the later delays)', async () => {
    const calm = await unlockDelays(false, { random: seededRandom(SEED, 11), reconnectRandom: seededRandom(0, 0) });
    const shared = seededRandom(SEED, 11);
    const dropped = await unlockDelays(true, { random: shared, reconnectRandom: shared });
    expect(dropped.slice(0, 3)).toEqual(calm.slice(0, 3));
    expect(dropped.slice(3)).not.toEqual(calm.slice(3));
  });
});
