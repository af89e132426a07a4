import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedBroker, type InThreadBroker } from '../../src/broker/embedded-broker.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { startFleet } from '../../src/fleet/start-fleet.js';
import { systemClock, type Clock } from '../../src/shared/clock.js';
import { eventually } from '../helpers/eventually.js';

/** Handles a failed start could leave behind (timers are unref'd by design, so count them apart). */
function openHandles(): string[] {
  return process.getActiveResourcesInfo().filter((kind) => kind !== 'Timeout' && kind !== 'Immediate');
}

let broker: InThreadBroker | undefined;
afterEach(async () => {
  await broker?.stop();
  broker = undefined;
});

describe('startFleet', () => {
  it('stops the control-plane agent it started when a station cannot be built, leaving no session and no socket', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    const before = openHandles();
    // A clock that fails is the failure after the agent is up: each station reads it as it is built.
    const clock: Clock = {
      ...systemClock,
      now: () => {
        throw new Error('the clock failed');
      },
    };
    const { stations } = parseFixture({ stations: [{ token: 'F-1', stationId: 1, locks: [{ lockId: '1' }] }] });
    await expect(startFleet({ stations, transport: { kind: 'tcp', url: broker.url }, seed: 1, clock })).rejects.toThrow('the clock failed');
    const { aedes } = broker;
    // The agent's polite end takes a few turns to reach the broker and close the socket.
    await eventually(() => expect({ clients: aedes.connectedClients, handles: openHandles() }).toEqual({ clients: 0, handles: before }), { what: 'the agent to disconnect and close its socket' });
    expect(openHandles()).toEqual(before);
  });
});
