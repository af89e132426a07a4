/**
 * `judge.enabled: false` (docs/judge.md) switches the whole judge off: the same sloppy command that
 * the judge reports with the judge on (a QoS 0 unlock) leaves the fleet's log empty with it off. The
 * bench's judge part measures the judge's cost by running both in one run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';

expectJudgeFindings('publishes a QoS 0 command by hand, to see the judge report it when it is on');

const fixture = (enabled: boolean | undefined) => ({
  stations: [{ token: 'SW-1', stationId: 1, locks: [{ lockId: '1' }] }],
  ...(enabled === undefined ? {} : { judge: { enabled } }),
});

let sim: StartedSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

/** Publishes a QoS 0 unlock and waits for the station's ack, so the station has seen the command. */
async function sloppyUnlock(started: StartedSimulator): Promise<void> {
  const observer = await MqttObserver.connect(started.mqttUrl, ['stations/SW-1/acks']);
  const backend = await mqtt.connectAsync(started.mqttUrl, { clientId: 'judge-switch-backend', reconnectPeriod: 0 });
  try {
    await backend.publishAsync('stations/SW-1/locks/1/unlock', JSON.stringify({ commandId: 'c-1', sentAt: new Date().toISOString() }), { qos: 0 });
    // The station judges a command before it acks it: after the ack, the fleet's log is complete.
    await observer.waitFor((m) => m.json?.commandId === 'c-1', 'the ack of c-1');
  } finally {
    await backend.endAsync();
    await observer.close();
  }
}

describe('judge.enabled', () => {
  it.each([
    [undefined, { 'service.qos0-command': 1 }],
    [true, { 'service.qos0-command': 1 }],
    [false, {}],
  ])('judge.enabled %s: a QoS 0 command gives %o', async (enabled, summary) => {
    sim = await startSimulator({ fixture: fixture(enabled), http: false });
    await sloppyUnlock(sim);
    expect(sim.fleet.judge.summary()).toEqual(summary);
  });
});
