/**
 * The whole simulator over MQTT-over-WebSocket (docs/mqtt-security.md, "Connections"): stations,
 * the `/v1` gateway, the control plane and the fleet agent all on a `ws://` broker, and on the
 * secured embedded broker's `wss://` listener with per-station certificates from `station-sim
 * certs`. Until now ws and wss were proven for one session at a time (test/mqtt/tls-connections).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedBrokerSettings } from '../../src/broker/broker-settings.js';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { generateTestPki } from '../../src/certs/test-pki.js';
import { loadFixture } from '../../src/fixture/load-fixture.js';
import { startTestSimulator } from '../../src/testing/test-simulator.js';

const TOKENS = ['WS-1', 'WS-2'];
const PASSWORD = 'ws-account-password';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'websocket-broker-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function writeFixture(name: string, mqtt: object): Promise<string> {
  const file = join(dir, name);
  await writeFile(
    file,
    JSON.stringify({
      api: { loginThrottle: { enabled: false } },
      accounts: [{ email: 'ws@example.com', password: PASSWORD, stations: TOKENS }],
      stations: TOKENS.map((token, index) => ({ token, stationId: 800 + index, locks: [{ lockId: '1' }], behaviour: { unlockDelayMs: 20, relockMs: 60_000 } })),
      mqtt,
    }),
  );
  return file;
}

/** Every station online, an unlock of each through `/v1`, and a control action through the fleet agent. */
async function exercise(fixture: string, broker: string): Promise<void> {
  const simulator = await startTestSimulator({ fixture, broker, attach: false });
  try {
    const client = await simulator.login('ws@example.com');
    for (const token of TOKENS) {
      expect((await client.getStation(token)).status).toBe('online');
      expect(await client.unlock(token, '1')).toEqual({ success: true });
      await simulator.waitForLock(token, '1', 'unlocked');
    }
    await simulator.setOnline('WS-2', false);
    await simulator.waitForStation('WS-2', 'offline');
    expect((await client.getStation('WS-2')).status).toBe('offline');
  } finally {
    await simulator.stop();
  }
}

describe('the simulator over MQTT over WebSocket', () => {
  it('runs on a ws:// broker', async () => {
    const fixture = await writeFixture('ws.json', {});
    const broker = await startEmbeddedBroker({ port: 0, host: '127.0.0.1', wsPort: 0 });
    try {
      expect(broker.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
      await exercise(fixture, broker.wsUrl!);
    } finally {
      await broker.stop();
    }
  });

  it('runs on the secured embedded broker’s wss:// listener, each station with its own certificate', async () => {
    await generateTestPki({ dir: join(dir, 'certs'), tokens: TOKENS });
    const fixture = await writeFixture('wss.json', { certs: './certs' });
    const { settings } = embeddedBrokerSettings(await loadFixture(fixture), { host: '127.0.0.1', wsPort: 0 });
    const broker = await startEmbeddedBroker({ port: 0, host: '127.0.0.1', ...settings });
    try {
      expect(broker.auth).toBe(true);
      expect(broker.wsUrl).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/);
      await exercise(fixture, broker.wsUrl!);
      expect(broker.refusedCounts()).toEqual({ connect: 0, publish: 0, subscribe: 0, 'packet-too-large': 0 });
    } finally {
      await broker.stop();
    }
  });
});
