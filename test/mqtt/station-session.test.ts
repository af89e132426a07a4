/**
 * A station's MQTT session mode (fixture behaviour `session`): with "persistent" (clean session 0)
 * the broker keeps the station's subscription while it is away and queues the QoS 1 commands sent
 * meanwhile, so an unlock the service sent while the station was off the network reaches it when
 * it reconnects; with "clean" the broker discards the session and the command is lost. Against the
 * embedded broker and against a real Mosquitto. Commands here are seconds old at most, well inside
 * the station's commandTtlMs (30 s by default).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import { mosquittoAvailable, startMosquitto } from '../helpers/mosquitto.js';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { StationClient } from '../../src/mqtt/station-client.js';
import { systemClock } from '../../src/shared/clock.js';
import { seededRandom } from '../../src/station/random.js';

const brokers = [
  [
    'the embedded broker',
    async () => {
      const broker = await startEmbeddedBroker({ port: 0 });
      return { url: broker.url, stop: () => broker.stop() };
    },
    true,
  ],
  ['Mosquitto', () => startMosquitto(), mosquittoAvailable()],
] as const;

describe.each(brokers)('a station session against %s', (_, startBroker, available) => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * Starts a station in `session` mode, takes it off the network (a drop, no DISCONNECT), has the
   * service publish an unlock at QoS 1 for it, brings it back and then sends a second unlock: the
   * acks the service sees, in order. The second command's ack tells the first had its chance, as
   * a queued command is delivered right after the CONNACK, before anything published later.
   */
  async function unlockWhileAway(session: 'clean' | 'persistent', token: string): Promise<{ commandId: string; accepted: boolean }[]> {
    const broker = await startBroker();
    cleanups.push(() => broker.stop());
    const [config] = parseFixture({
      defaults: { heartbeatMs: 0, session },
      stations: [{ token, stationId: 3, locks: [{ lockId: '1' }, { lockId: '2' }] }],
    }).stations;
    const service = await MqttObserver.connect(broker.url, [`stations/${token}/acks`]);
    cleanups.push(() => service.client.endAsync(true));
    const station = new StationClient({ config: config!, transport: { kind: 'tcp', url: broker.url }, clock: systemClock, random: seededRandom(1) });
    cleanups.push(() => station.kill());
    await station.start();
    await station.goOffline();
    const command = (commandId: string) => JSON.stringify({ commandId, sentAt: new Date().toISOString() });
    await service.client.publishAsync(`stations/${token}/locks/1/unlock`, command('while-away'), { qos: 1 });
    await station.goOnline();
    await service.client.publishAsync(`stations/${token}/locks/2/unlock`, command('after-return'), { qos: 1 });
    await service.waitFor((seen) => seen.json?.commandId === 'after-return', 'the ack of the command sent after the return');
    return service.messages.map(({ json }) => ({ commandId: json.commandId, accepted: json.accepted }));
  }

  it.skipIf(!available)('persistent: an unlock sent while the station was away reaches it when it reconnects', async () => {
    expect(await unlockWhileAway('persistent', 'PS-1')).toEqual([
      { commandId: 'while-away', accepted: true },
      { commandId: 'after-return', accepted: true },
    ]);
  });

  it.skipIf(!available)('clean: the broker discards the session, and the unlock sent while the station was away is lost', async () => {
    expect(await unlockWhileAway('clean', 'CS-1')).toEqual([{ commandId: 'after-return', accepted: true }]);
  });
});
