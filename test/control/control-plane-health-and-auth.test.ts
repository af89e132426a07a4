/**
 * The control plane's health, its answers when the fleet cannot be reached, its token, and the
 * time its snapshot carries (docs/control-plane.md).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { EventSocket } from '../helpers/event-socket.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options: Parameters<typeof startSimulator>[0]): Promise<StartedSimulator> {
  const sim = await startSimulator(options);
  cleanups.push(() => sim.stop());
  return sim;
}

const json = { 'content-type': 'application/json' };

describe('/sim/v1/health', () => {
  it('is ready once every station has come up, even when one is taken offline before anyone asked', async () => {
    const sim = await start({ fixture: 'fixtures/ci.json' });
    const off = await fetch(`${sim.controlUrl}/stations/CI-2/connection`, { method: 'POST', headers: json, body: JSON.stringify({ online: false }) });
    expect(off.status).toBe(200);
    const health = await fetch(`${sim.controlUrl}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ready: true });
  });

  it('names the broker the stations use, embedded or not, for the dashboard\'s header', async () => {
    const sim = await start({ fixture: 'fixtures/ci.json' });
    const health = await (await fetch(`${sim.controlUrl}/health`)).json();
    expect(health.mqtt).toEqual({ url: sim.mqttUrl, embedded: true });
  });

  it('says not ready when the broker is gone, and the fleet endpoints answer 503 at once rather than an empty fleet', async () => {
    const broker = await startEmbeddedBroker({ port: 0 }); // stands in for an external broker
    let brokerStopped = false;
    cleanups.push(async () => brokerStopped || broker.stop());
    const sim = await start({ fixture: 'fixtures/ci.json', broker: broker.url });
    expect((await fetch(`${sim.controlUrl}/health`)).status).toBe(200);
    brokerStopped = true;
    await broker.stop();
    await vi.waitFor(async () => expect((await fetch(`${sim.controlUrl}/health`)).status).toBe(503), { timeout: 10_000, interval: 100 });
    for (const [method, path] of [['GET', '/stations'], ['POST', '/reset'], ['POST', '/stations/CI-1/connection']] as const) {
      const body = path.endsWith('/connection') ? { headers: json, body: JSON.stringify({ online: false }) } : {};
      const response = await fetch(`${sim.controlUrl}${path}`, { method, ...body });
      expect(response.status, path).toBe(503);
      expect(await response.json()).toEqual({ message: 'The control plane is not connected to the MQTT broker; try again once it is back' });
    }
  }, 30_000);
});

describe('/sim/v1 with a control token', () => {
  it('takes the Bearer scheme in any case, and guards unknown routes too, with a challenge', async () => {
    const controlToken = 'a-control-token-for-tests-0123456789';
    const sim = await start({ fixture: 'fixtures/ci.json', controlToken });
    expect((await fetch(`${sim.controlUrl}/health`, { headers: { authorization: `bearer ${controlToken}` } })).status).toBe(200);
    for (const path of ['/health', '/nothing-here']) {
      const refused = await fetch(`${sim.controlUrl}${path}`);
      expect(refused.status, path).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="station-sim control plane"');
      expect(await refused.json()).toEqual({ message: 'Control token is invalid' });
    }
    expect((await fetch(`${sim.controlUrl}/nothing-here`, { headers: { authorization: `Bearer ${controlToken}` } })).status).toBe(404);
  });
});

describe('/sim/v1/events', () => {
  it('stamps the snapshot with simulated time, as every other event', async () => {
    const sim = await start({ fixture: 'fixtures/ci.json', clock: 'manual' });
    await sim.clock.advance(600_000); // ten minutes ahead of the wall clock
    const events = await EventSocket.open(`${sim.controlUrl}/events`);
    cleanups.push(async () => events.close());
    const snapshot = await events.waitFor((event) => event.type === 'snapshot', 'snapshot');
    expect(Date.parse(snapshot.time as string)).toBe(sim.clock.now());
  });

  // The request journal tracks every command from start-up, so the hub knows when each was sent
  // even when no stream listened then: the ack carries its real time, never a made-up one.
  it('reports the ack of a command sent before anyone listened with its time since the send', async () => {
    const sim = await start({ fixture: 'fixtures/ci.json' });
    // The ack comes 800 ms after the command, so the stream can open in between.
    const fault = await fetch(`${sim.controlUrl}/stations/CI-1/faults`, { method: 'POST', headers: json, body: JSON.stringify({ kind: 'delayAcks', delayMs: 800 }) });
    expect(fault.status).toBe(201);
    const login = await fetch(`${sim.apiUrl}/v1/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: 'ci@example.com', password: 'ci-password' }) });
    const { accessToken } = (await login.json()) as { accessToken: string };
    const commands = await MqttObserver.connect(sim.mqttUrl, ['stations/CI-1/locks/1/unlock']);
    cleanups.push(() => commands.close());
    const unlocking = fetch(`${sim.apiUrl}/v1/stations/CI-1/locks/1/unlock`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } });
    // The command is out (it has reached the broker) and nobody listens to the event stream yet.
    await commands.waitFor(() => true, 'the unlock command on the broker');
    const events = await EventSocket.open(`${sim.controlUrl}/events`);
    cleanups.push(async () => events.close());
    expect(await (await unlocking).json()).toEqual({ success: true });
    const acked = await events.waitFor((event) => event.type === 'command.acked' && event.token === 'CI-1', 'the ack');
    expect(events.events.some((event) => event.type === 'command.sent' && event.commandId === acked.commandId)).toBe(false);
    // The station held its ack 800 ms.
    expect(acked.ms).toBeGreaterThanOrEqual(790);
  });
});
