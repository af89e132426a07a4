/**
 * Fleet requests (`query`, `reset`) over the real broker: fleet processes answer a chunk of
 * stations at a time, and the control plane waits as long as chunks keep coming, so a large fleet
 * is counted whole however long its reset takes (src/fleet/fleet-agent.ts, control-channel.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import mqtt from 'mqtt';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { startEmbeddedBroker, type StartedBroker } from '../../src/broker/embedded-broker.js';
import { ControlChannel } from '../../src/control/control-channel.js';
import { FLEET_REPLY_CHUNK, FLEET_REPLY_MAX_BYTES } from '../../src/fleet/fleet-agent.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { SIM_TOPICS } from '../../src/contract/sim-topics.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('fleet requests', () => {
  it('a fleet process answers one chunk of stations at a time, and the control plane counts them all', async () => {
    const count = 2 * FLEET_REPLY_CHUNK + 500;
    const sim: StartedSimulator = await startSimulator({
      fixture: { fleets: [{ count, tokenPattern: 'F-{n}', firstStationId: 1, locksPerStation: 1 }], defaults: { heartbeatMs: 0 } },
    });
    cleanups.push(() => sim.stop());
    const observer = await mqtt.connectAsync(sim.mqttUrl);
    cleanups.push(() => observer.endAsync());
    const replies: number[] = [];
    const sizes: number[] = [];
    observer.on('message', (_topic, payload) => {
      sizes.push(payload.length);
      // A reset is answered with tokens (and at once with none, to say it is under way); a query with snapshots.
      const reply = JSON.parse(payload.toString()) as { stations?: unknown[]; tokens?: unknown[] };
      replies.push((reply.tokens ?? reply.stations ?? []).length);
    });
    await observer.subscribeAsync(SIM_TOPICS.reply('+'));

    const reset = await fetch(`${sim.controlUrl}/reset`, { method: 'POST' });
    expect(await reset.json()).toEqual({ reset: count, missing: 0 });
    // Every station once, in replies that each stay under the brokers' packet limits.
    await vi.waitFor(() => expect(replies.reduce((sum, n) => sum + n, 0)).toBe(count));
    expect(replies.length).toBeGreaterThan(3);
    expect(Math.max(...sizes)).toBeLessThan(FLEET_REPLY_MAX_BYTES + 200);
    const listed = (await (await fetch(`${sim.controlUrl}/stations`)).json()) as { stations: { token: string }[] };
    expect(listed.stations).toHaveLength(count);
  }, 60_000);

  it('says how many fixture stations no fleet process answered for, rather than pass a part of the fleet for the whole', async () => {
    // Only the first of two shards runs: the other half of the fixture has no process.
    const sim = await startSimulator({ fixture: { fleets: [{ count: 10, tokenPattern: 'H-{n}', firstStationId: 1, locksPerStation: 1 }], defaults: { heartbeatMs: 0 } }, shard: { index: 1, count: 2 } });
    cleanups.push(() => sim.stop());
    const listed = (await (await fetch(`${sim.controlUrl}/stations`)).json()) as { stations: { token: string }[]; missing: number };
    expect({ stations: listed.stations.length, missing: listed.missing }).toEqual({ stations: 5, missing: 5 });
    expect(await (await fetch(`${sim.controlUrl}/reset`, { method: 'POST' })).json()).toEqual({ reset: 5, missing: 5 });
  }, 30_000);

  it('waits for the next chunk as long as chunks come within the timeout, however long the whole takes', async () => {
    const broker: StartedBroker = await startEmbeddedBroker({ port: 0 });
    cleanups.push(() => broker.stop());
    const tokens = ['A', 'B', 'C'];
    const fixture = parseFixture({ stations: tokens.map((token, index) => ({ token, stationId: index + 1, locks: [{ lockId: '1' }] })) });
    const channel = await ControlChannel.start({ transport: { kind: 'tcp', url: broker.url }, fixture, timeoutMs: 400, onMessage: () => undefined });
    cleanups.push(() => channel.stop());
    // A fleet process that answers one station every 250 ms: 750 ms in all, more than the timeout.
    const agent = await mqtt.connectAsync(broker.url);
    cleanups.push(() => agent.endAsync());
    agent.on('message', (_topic, payload) => {
      const { requestId } = JSON.parse(payload.toString()) as { requestId: string };
      tokens.forEach((token, index) => {
        setTimeout(() => {
          const station = { token, stationId: index + 1, status: 'online', locks: [] };
          void agent.publishAsync(SIM_TOPICS.reply(requestId), JSON.stringify({ requestId, stations: [station] }), { qos: 1 });
        }, 250 * (index + 1));
      });
    });
    await agent.subscribeAsync(SIM_TOPICS.fleet, { qos: 1 });
    const started = performance.now();
    const stations = await channel.fleet('query');
    expect(stations.map((station) => station.token)).toEqual(tokens);
    expect(performance.now() - started).toBeGreaterThan(700);
  });

  it('stop() ends the requests still waiting at once, instead of leaving their timers to run out', async () => {
    const broker: StartedBroker = await startEmbeddedBroker({ port: 0 });
    cleanups.push(() => broker.stop());
    const fixture = parseFixture({ stations: [{ token: 'A', stationId: 1, locks: [{ lockId: '1' }] }] });
    // Nobody hosts station A: both requests would wait out the 5 s timeout.
    const channel = await ControlChannel.start({ transport: { kind: 'tcp', url: broker.url }, fixture, onMessage: () => undefined });
    // The expectations are attached before stop() so that the rejections are handled as they come.
    const control = expect(channel.control('A', { action: 'snapshot' })).rejects.toThrow('the control channel has stopped');
    const fleet = expect(channel.fleet('query')).rejects.toThrow('the control channel has stopped');
    await channel.stop();
    await control;
    await fleet;
    await expect(channel.control('A', { action: 'snapshot' })).rejects.toThrow('the control channel has stopped');
  });
});
