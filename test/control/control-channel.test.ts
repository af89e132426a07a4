/**
 * The control channel and a broker that goes away: a request made while the session is down is
 * refused at once with BROKER_DISCONNECTED, and no request, refused or timed out, is ever delivered
 * to the fleet after the broker comes back (mqtt.js replays unacknowledged QoS 1 publications on
 * reconnect, which once ran control actions long after their caller had been told 504).
 */
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import mqtt from 'mqtt';
import { startEmbeddedBroker, type InThreadBroker } from '../../src/broker/embedded-broker.js';
import { ControlChannel } from '../../src/control/control-channel.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { SIM_TOPICS } from '../../src/contract/sim-topics.js';
import type { MqttTransport } from '../../src/mqtt/transport.js';
import { SimError } from '../../src/errors.js';

const fixture = parseFixture({ stations: [{ token: 'A', stationId: 1, locks: [{ lockId: '1' }] }] });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * An embedded broker reached through a gate: `down()` drops the channel's connection and refuses
 * new ones until `up()`, as a broker that crashed and restarts would.
 */
async function gatedBroker(): Promise<{ broker: InThreadBroker; transport: MqttTransport; down(): void; up(): void }> {
  const broker = await startEmbeddedBroker({ port: 0 });
  cleanups.push(() => broker.stop());
  const streams = new Set<Duplex>();
  let open = true;
  const transport: MqttTransport = {
    kind: 'memory',
    broker: {
      handle: (stream) => {
        if (!open) {
          stream.destroy();
          return;
        }
        streams.add(stream);
        stream.once('close', () => streams.delete(stream));
        broker.handle(stream);
      },
    },
  };
  return {
    broker,
    transport,
    down: () => {
      open = false;
      for (const stream of streams) stream.destroy();
    },
    up: () => {
      open = true;
    },
  };
}

/** A fleet process stand-in that records every control request and answers all but snapshots and queries. */
async function recordingAgent(url: string): Promise<{ seen: { action: string; requestId: string }[] }> {
  const agent = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  cleanups.push(() => agent.endAsync(true));
  const seen: { action: string; requestId: string }[] = [];
  agent.on('message', (_topic, payload) => {
    const request = JSON.parse(payload.toString()) as { action: string; requestId: string };
    seen.push({ action: request.action, requestId: request.requestId });
    if (request.action === 'snapshot' || request.action === 'query') return; // never answered
    agent.publish(SIM_TOPICS.reply(request.requestId), JSON.stringify({ requestId: request.requestId, ok: true, station: { token: 'A' } }), { qos: 1 });
  });
  await agent.subscribeAsync([SIM_TOPICS.controlFilter, SIM_TOPICS.fleet], { qos: 1 });
  return { seen };
}

async function startChannel(transport: MqttTransport, timeoutMs: number): Promise<ControlChannel> {
  const channel = await ControlChannel.start({ transport, fixture, timeoutMs, reconnectMs: 20, onMessage: () => undefined });
  cleanups.push(() => channel.stop());
  return channel;
}

function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

describe('ControlChannel while the broker is away', () => {
  it('refuses control and fleet requests at once with BROKER_DISCONNECTED, and never sends them later', async () => {
    const gate = await gatedBroker();
    const agent = await recordingAgent(gate.broker.url);
    // A refusal must not wait for the timeout.
    const channel = await startChannel(gate.transport, 5000);

    gate.down();
    await vi.waitFor(() => expect(channel.connected).toBe(false));
    const started = Date.now();
    for (const request of [channel.control('A', { action: 'connection', online: false }), channel.fleet('reset')]) {
      const error = await failure(request);
      expect(error).toBeInstanceOf(SimError);
      expect(error).toMatchObject({ code: 'BROKER_DISCONNECTED', statusCode: 503 });
    }
    expect(Date.now() - started).toBeLessThan(1000);

    gate.up();
    await vi.waitFor(() => expect(channel.connected).toBe(true));
    // A request after the reconnect goes through; nothing refused before it arrives ahead of it.
    await channel.control('A', { action: 'battery', voltage: 11.9 });
    expect(agent.seen.map((request) => request.action)).toEqual(['battery']);
  });

  it('a request that timed out while its PUBACK was lost with the connection is not sent again after the reconnect', async () => {
    const gate = await gatedBroker();
    const agent = await recordingAgent(gate.broker.url);
    const channel = await startChannel(gate.transport, 150);
    // The broker takes the request but neither routes nor acknowledges it before it goes down.
    let swallow = true;
    gate.broker.aedes.authorizePublish = (client, packet, callback) => {
      if (swallow && client?.id.startsWith('station-sim-control-') && packet.topic.startsWith('station-sim/control/')) return;
      callback(null);
    };
    const error = await failure(channel.control('A', { action: 'physical', lockId: '1', physical: 'jam' }));
    expect(error).toMatchObject({ code: 'STATION_NO_RESPONSE', statusCode: 504 });

    swallow = false;
    gate.down();
    await vi.waitFor(() => expect(channel.connected).toBe(false));
    gate.up();
    await vi.waitFor(() => expect(channel.connected).toBe(true));
    await channel.control('A', { action: 'battery', voltage: 11.9 });
    // mqtt.js would have replayed the jam right after CONNACK, ahead of the battery request.
    expect(agent.seen.map((request) => request.action)).toEqual(['battery']);
  });
});
