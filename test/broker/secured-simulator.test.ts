/**
 * The simulator on its secured embedded broker: its own stations, gateway and control plane (in
 * memory, authenticated by construction) work under the ACL, unlocks go end to end through /v1,
 * while a foreign MQTT client is refused, and the refusals show in /sim/v1/health and on the event
 * stream. And Mosquitto 2's rule at the command line: beyond loopback, no open broker unless asked.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { startTestSimulator, type TestSimulator } from '../../src/testing/test-simulator.js';
import { EventSocket } from '../helpers/event-socket.js';
import { CliProcess, runCliInProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';

const dir = mkdtempSync(path.join(tmpdir(), 'secured-sim-'));
const PASSWORD = 'observer-secret-pass';
let simulator: TestSimulator;

beforeAll(async () => {
  const ci = JSON.parse(readFileSync('fixtures/ci.json', 'utf8')) as Record<string, unknown>;
  writeFileSync(path.join(dir, 'observer.pass'), PASSWORD);
  const fixture = path.join(dir, 'fixture.json');
  writeFileSync(fixture, JSON.stringify({ ...ci, mqtt: { identities: { observer: { password: { file: 'observer.pass' } } } } }));
  simulator = await startTestSimulator({ fixture, mqttPort: 0 });
}, 60_000);

afterAll(async () => {
  await simulator?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the simulator on its secured broker', () => {
  it('runs its own fleet, gateway and control plane under the ACL: an unlock goes end to end', async () => {
    expect(simulator.sim.broker?.auth).toBe(true);
    const client = await simulator.login('ci@example.com');
    expect(await client.unlock('CI-1', '1')).toEqual({ success: true });
    await simulator.waitForLock('CI-1', '1', 'unlocked');
    expect(simulator.sim.broker?.refusedCounts()).toEqual({ connect: 0, publish: 0, subscribe: 0, 'packet-too-large': 0 });
  });

  it('counts what a foreign client is refused in /sim/v1/health and sends it on the event stream, without the password', async () => {
    const events = await EventSocket.open(`${simulator.sim.controlUrl}/events`);
    try {
      const url = simulator.sim.broker!.url;
      const anonymous = mqtt.connectAsync(url, { reconnectPeriod: 0, clientId: 'intruder' }, false);
      await expect(anonymous).rejects.toMatchObject({ code: 4 });
      const reader = await mqtt.connectAsync(url, { reconnectPeriod: 0, clientId: 'reader-1', username: 'station-sim-observer', password: PASSWORD }, false);
      reader.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => reader.once('close', () => resolve()));
      reader.publish('stations/CI-1/locks/1/unlock', '{"commandId":"x"}', { qos: 1 });
      await closed;
      const connect = await events.waitFor((e) => e.type === 'broker.refused' && e.kind === 'connect', 'a connect refusal');
      expect(connect).toMatchObject({ clientId: 'intruder', reason: 'no user name or client certificate' });
      const publish = await events.waitFor((e) => e.type === 'broker.refused' && e.kind === 'publish', 'a publish refusal');
      expect(publish).toMatchObject({ identity: 'observer', clientId: 'reader-1', topic: 'stations/CI-1/locks/1/unlock', counts: { connect: 1, publish: 1 } });
      expect(JSON.stringify(events.events)).not.toContain(PASSWORD);
      await eventually(async () => {
        const health = (await (await fetch(`${simulator.sim.controlUrl}/health`)).json()) as Record<string, any>;
        expect(health.broker).toEqual({ refused: { connect: 1, publish: 1, subscribe: 0, 'packet-too-large': 0 } });
      }, { what: 'the refusals in health' });
    } finally {
      events.socket.close();
    }
  });
});

describe('station-sim broker beyond loopback', () => {
  it('refuses to start open on a non-loopback host, in one line', async () => {
    const { code, stderr } = await runCliInProcess(['broker', '--host', '0.0.0.0', '--mqtt-port', '0']);
    expect(code).toBe(1);
    expect(stderr).toBe(
      'station-sim: host "0.0.0.0" lets other machines reach the embedded MQTT broker, where anyone could open any lock: give the fixture mqtt identities (or --broker-auth), or add --insecure-broker to leave it open\n',
    );
  });

  it('starts open with --insecure-broker, saying so', async () => {
    const cli = new CliProcess(['broker', '--host', '0.0.0.0', '--mqtt-port', '0', '--insecure-broker', '--json']);
    const ready = await cli.readyJson();
    expect(ready.mqttUrl).toMatch(/^mqtt:\/\/0\.0\.0\.0:\d+$/);
    expect(cli.stderr).toContain('station-sim: the embedded MQTT broker on 0.0.0.0 takes anyone who reaches it, without authentication (--insecure-broker)');
    expect(await cli.signal('SIGINT')).toBe(0);
  });

  it('starts beyond loopback with --broker-auth, and refuses anonymous clients', async () => {
    const cli = new CliProcess(['broker', '--host', '0.0.0.0', '--mqtt-port', '0', '--broker-auth', '--json']);
    const ready = await cli.readyJson();
    expect(ready.brokerAuth).toBe(true);
    const port = new URL(ready.mqttUrl as string).port;
    await expect(mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0, clientId: 'x' }, false)).rejects.toMatchObject({ code: 4 });
    expect(await cli.signal('SIGINT')).toBe(0);
  });
});
