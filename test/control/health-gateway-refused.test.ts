/**
 * `/sim/v1/health` shows what the `/v1` gateway of its process refused from the broker, by reason,
 * once it has refused anything (docs/control-plane.md).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { eventually } from '../helpers/eventually.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings("an outsider publishes a station's status and an ack on the open broker: spoofing, on purpose");

let sim: StartedSimulator;

beforeAll(async () => {
  sim = await startSimulator({ fixture: { defaults: { heartbeatMs: 0 }, stations: [{ token: 'H-1', stationId: 1, locks: [{ lockId: '1' }] }] } });
});
afterAll(async () => {
  await sim.stop();
});

async function health(): Promise<Record<string, unknown>> {
  return (await (await fetch(`${sim.controlUrl}/health`)).json()) as Record<string, unknown>;
}

it('counts refused broker messages by reason in health, and has no gateway field before', async () => {
  const broker = { refused: { connect: 0, publish: 0, subscribe: 0, 'packet-too-large': 0 } };
  expect(await health()).toEqual({ ready: true, stations: { total: 1, online: 1, offline: 0 }, broker, mqtt: { url: sim.mqttUrl, embedded: true } });
  const outsider = await mqtt.connectAsync(sim.mqttUrl, { clientId: 'outsider', reconnectPeriod: 0 });
  try {
    const fake = { stationId: 6666, status: 'offline', batteryVoltage: 12, lastConnection: new Date().toISOString() };
    await outsider.publishAsync('stations/H-1/status', JSON.stringify(fake), { qos: 1 });
    await outsider.publishAsync('stations/H-1/acks', JSON.stringify({ commandId: 'made-up', lockId: '1', accepted: true }), { qos: 1 });
  } finally {
    await outsider.endAsync();
  }
  await eventually(async () =>
    expect(await health()).toEqual({ ready: true, stations: { total: 1, online: 1, offline: 0 }, broker, mqtt: { url: sim.mqttUrl, embedded: true }, gateway: { refused: { wrongStation: 1, unexpectedAck: 1 } } }),
  );
});
