/**
 * The fleet agent answers a reset for every station it hosts, even when one station's reset fails:
 * that station is left out of the answer (the control plane counts it as missing), and the rest
 * of the shard is not taken for missing with it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { ControlChannel } from '../../src/control/control-channel.js';
import { startFleetAgent } from '../../src/fleet/fleet-agent.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import type { StationClient } from '../../src/mqtt/station-client.js';
import type { MqttTransport } from '../../src/mqtt/transport.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Just what the agent uses of a station for a reset: `reset()` and the model's snapshot. */
function fakeStation(token: string, reset: () => Promise<void>): StationClient {
  return { token, reset, model: { snapshot: () => ({ token }) } } as unknown as StationClient;
}

describe('fleet agent', () => {
  it('answers a reset although one station of the chunk fails to reset, leaving that one out', async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    cleanups.push(() => broker.stop());
    const transport: MqttTransport = { kind: 'memory', broker };
    const fixture = parseFixture({ stations: ['GOOD', 'BAD'].map((token, index) => ({ token, stationId: index + 1, locks: [{ lockId: '1' }] })) });
    const stations = new Map([
      ['GOOD', fakeStation('GOOD', async () => undefined)],
      ['BAD', fakeStation('BAD', async () => Promise.reject(new Error('connection closed')))],
    ]);
    const agent = await startFleetAgent({ transport, stations });
    cleanups.push(() => agent.stop());
    const channel = await ControlChannel.start({ transport, fixture, timeoutMs: 300, onMessage: () => undefined });
    cleanups.push(() => channel.stop());
    const reset = await channel.fleet('reset');
    expect(reset).toEqual(['GOOD']);
  });
});
