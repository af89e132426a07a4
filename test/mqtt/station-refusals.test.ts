/**
 * A station the broker refuses is said (issue 29, item 5; docs/scale-out.md): once its password is
 * rotated on the broker and not in the fleet's process, the broker refuses it at every reconnect
 * while the other stations are connected, so no "lost the broker" line is said for it. `stations`
 * says one line per station and cause, and `/sim/v1/health` counts it (`stations.refused`).
 * Against the secured embedded broker on its own thread, on loopback, restarted on the same port.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startBrokerThread } from '../../src/broker/broker-thread.js';
import { brokerSecurity } from '../../src/broker/broker-security.js';
import type { StartedBroker } from '../../src/broker/embedded-broker.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { refusalCause } from '../../src/mqtt/transport.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { watchFleet } from '../../src/cli/broker-notices.js';
import { eventually } from '../helpers/eventually.js';

describe('refusalCause', () => {
  const error = (message: string, code?: string | number) => Object.assign(new Error(message), code === undefined ? {} : { code });
  it('names a refused CONNACK, a refused client certificate and a failed handshake, and nothing else', () => {
    expect(refusalCause(error('Connection refused: Bad username or password', 4))).toBe('bad username or password (CONNACK 4)');
    expect(refusalCause(error('Connection refused: Identifier rejected', 2))).toBe('identifier rejected (CONNACK 2)');
    expect(refusalCause(error('sslv3 alert certificate revoked', 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED'))).toBe('its client certificate was refused (TLS alert: certificate revoked)');
    expect(refusalCause(error('certificate has expired', 'CERT_HAS_EXPIRED'))).toMatch(/^the TLS handshake failed: the broker has a certificate that has expired/);
    expect(refusalCause(error('handshake failure', 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE'))).toBe('the TLS handshake failed (ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE)');
    for (const unreachable of [error('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'), error('read ECONNRESET', 'ECONNRESET'), error('connack timeout')]) {
      expect(refusalCause(unreachable)).toBeUndefined();
    }
  });
});

describe('a station the broker refuses', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'station-refusals-'));
  const secret = (token: string) => path.join(dir, 'secrets', `${token}.pass`);
  let broker: StartedBroker | undefined;
  let sim: StartedSimulator | undefined;
  afterAll(async () => {
    await sim?.stop();
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is said once per station and cause, and counted in health, while the others are connected', async () => {
    mkdirSync(path.join(dir, 'secrets'));
    for (const token of ['RF-1', 'RF-2']) writeFileSync(secret(token), `${token}-first-password\n`, { mode: 0o600 });
    process.env.REFUSAL_TEST_SERVICE = 'refusal-service-password';
    process.env.REFUSAL_TEST_CONTROL = 'refusal-control-password';
    process.env.REFUSAL_TEST_AGENT = 'refusal-agent-password';
    const fixture = {
      defaults: { heartbeatMs: 0 },
      stations: [
        { token: 'RF-1', stationId: 1, locks: [{ lockId: '1' }] },
        { token: 'RF-2', stationId: 2, locks: [{ lockId: '1' }] },
      ],
      mqtt: {
        identities: {
          station: { password: { file: 'secrets/{token}.pass' } },
          service: { password: { env: 'REFUSAL_TEST_SERVICE' } },
          control: { password: { env: 'REFUSAL_TEST_CONTROL' } },
          agent: { password: { env: 'REFUSAL_TEST_AGENT' } },
        },
      },
    };
    const fixtureFile = path.join(dir, 'fixture.json');
    writeFileSync(fixtureFile, JSON.stringify(fixture));
    const security = brokerSecurity(parseFixture(fixture, fixtureFile));
    broker = await startBrokerThread({ port: 0, security });
    const port = Number(new URL(broker.url).port);
    sim = await startSimulator({ fixture: fixtureFile, broker: broker.url, httpPort: 0 });
    const lines: string[] = [];
    watchFleet(sim.fleet.stations.values(), undefined, (line) => lines.push(line));

    // RF-2's password changes on the broker's side only; the broker restarts, dropping everyone.
    writeFileSync(secret('RF-2'), 'RF-2-rotated-password\n');
    await broker.stop();
    broker = await startBrokerThread({ port, security });

    const health = async () => (await fetch(`${sim!.controlUrl}/health`)).json() as Promise<{ stations: { online: number; refused?: number } }>;
    await eventually(async () => expect((await health()).stations).toMatchObject({ online: 1, refused: 1 }), { what: 'RF-1 back and RF-2 refused', timeout: 20_000 });
    // Several refused reconnects, one line.
    await eventually(() => expect(broker!.refusedCounts().connect).toBeGreaterThanOrEqual(3), { what: 'three refusals of RF-2', timeout: 20_000 });
    expect(lines).toEqual(['the broker refused station RF-2 (client id station-sim-RF-2): bad username or password (CONNACK 4); it keeps retrying, backing off']);
    expect(sim.fleet.stations.get('RF-1')!.refusal).toBeUndefined();
    expect(lines.join('')).not.toMatch(/first-password|rotated-password/);

    // Given its new password back, the station is accepted and no longer counted.
    writeFileSync(secret('RF-2'), 'RF-2-first-password\n');
    await eventually(async () => expect((await health()).stations).toEqual({ total: 2, online: 2, offline: 0 }), { what: 'RF-2 accepted again', timeout: 30_000 });
  }, 60_000);
});
