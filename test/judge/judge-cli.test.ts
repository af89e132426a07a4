/**
 * The judge's line at stop (docs/judge.md), from the real CLI: `station-sim stations` against
 * someone else's broker judges the commands a backend sends its stations and says what it found
 * when it stops.
 */
import { afterEach, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { CliProcess } from '../helpers/cli-process.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('station-sim stations, judged', () => {
  it("prints what the backend's commands broke on stderr at stop", async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    cleanups.push(() => broker.stop());
    const cli = new CliProcess(['stations', '--broker', broker.url, '--fixture', 'fixtures/ci.json', '--json']);
    cleanups.push(async () => cli.child.exitCode === null && cli.signal('SIGKILL'));
    await cli.readyJson();
    const observer = await MqttObserver.connect(broker.url, ['stations/CI-1/acks']);
    cleanups.push(() => observer.close());
    const backend = await mqtt.connectAsync(broker.url, { clientId: 'sloppy-backend', reconnectPeriod: 0 });
    cleanups.push(() => backend.endAsync());
    // QoS 0, twice: the station acks each, after it judged it.
    for (const commandId of ['q-1', 'q-2']) {
      await backend.publishAsync('stations/CI-1/locks/1/unlock', JSON.stringify({ commandId, sentAt: new Date().toISOString() }), { qos: 0 });
      await observer.waitFor((m) => m.json.commandId === commandId, `the ack of ${commandId}`);
    }
    expect(await cli.signal('SIGTERM')).toBe(0);
    expect(cli.stderr).toContain('station-sim: judge: 2 findings: service.qos0-command ×2\n');
  });
});
