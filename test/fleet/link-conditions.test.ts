/**
 * Stations on bad links, end to end: a command over a slow link takes its latency each way before
 * the `/v1` answer, and a half-open link makes the broker drop the station by its keepalive rule
 * (the last will says `offline`) and the station give up on its connection, until the link heals.
 */
import { afterEach, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { startEmbeddedBroker, type InThreadBroker } from '../../src/broker/embedded-broker.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { LINK_PROFILES } from '../../src/fixture/link-schema.js';
import { startFleet, type StartedFleet } from '../../src/fleet/start-fleet.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { ControlClient, StationSimClient } from '../../src/client/index.js';
import { eventually } from '../helpers/eventually.js';

const ACCOUNT = { email: 'links@example.com', password: 'links-password-1' } as const;

let sim: StartedSimulator<true> | undefined;
let fleet: StartedFleet | undefined;
let broker: InThreadBroker | undefined;
afterEach(async () => {
  await sim?.stop();
  await fleet?.stop();
  await broker?.stop();
  sim = fleet = broker = undefined;
});

describe('a station on a slow link', () => {
  it('answers an unlock no sooner than the link lets the command down and the ack back', async () => {
    sim = await startSimulator({
      fixture: {
        defaults: { unlockDelayMs: 0 },
        accounts: [{ ...ACCOUNT, stations: ['SLOW-1', 'FAST-1'] }],
        stations: [
          { token: 'SLOW-1', stationId: 1, locks: [{ lockId: '1' }], behaviour: { link: { latencyMs: 250 } } },
          { token: 'FAST-1', stationId: 2, locks: [{ lockId: '1' }] },
        ],
      },
    });
    const client = new StationSimClient({ baseUrl: sim.apiUrl, ...ACCOUNT });
    await client.login();
    const started = performance.now();
    await expect(client.unlock('SLOW-1', '1')).resolves.toMatchObject({ success: true });
    // Down 250 ms, back 250 ms, on the simulator's (real) clock: no answer can come sooner.
    expect(performance.now() - started).toBeGreaterThanOrEqual(500);
    await expect(client.unlock('FAST-1', '1')).resolves.toMatchObject({ success: true });
  });
});

describe('a link slower than the command timeout', () => {
  it('answers outcome unknown, and the station still acts on the command it received within its TTL', async () => {
    sim = await startSimulator({
      fixture: {
        defaults: { unlockDelayMs: 0, relockMs: 60_000 },
        api: { commandTimeoutMs: 300 },
        accounts: [{ ...ACCOUNT, stations: ['FAR-1'] }],
        stations: [{ token: 'FAR-1', stationId: 1, locks: [{ lockId: '1' }], behaviour: { link: { latencyMs: 250 } } }],
      },
    });
    const response = await fetch(`${sim.apiUrl}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ACCOUNT) });
    const { accessToken } = (await response.json()) as { accessToken: string };
    // Down 250 ms and back 250 ms is past the API's 300 ms: it cannot know, so it says so.
    const unlock = await fetch(`${sim.apiUrl}/v1/stations/FAR-1/locks/1/unlock`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } });
    expect(unlock.status).toBe(504);
    expect(((await unlock.json()) as { message: string }).message).toMatch(/^The station did not acknowledge the command in time; it may still carry it out/);
    // The command did reach the station, which opened the lock: exactly why the answer was not "failed".
    const control = new ControlClient({ url: sim.controlUrl });
    await eventually(async () => expect((await control.station('FAR-1')).locks[0]!.status).toBe('unlocked'), { what: 'the lock to open after the late command' });
  });
});

/** The fleet's transport to the embedded broker: its sessions in memory, or over TCP to its port. */
const TRANSPORTS = {
  memory: (running: InThreadBroker) => ({ kind: 'memory' as const, broker: running }),
  tcp: (running: InThreadBroker) => ({ kind: 'tcp' as const, url: running.url }),
};

describe.each(Object.keys(TRANSPORTS) as (keyof typeof TRANSPORTS)[])('a half-open link (%s sessions)', (transport) => {
  it('is noticed by keepalive on both ends: the will says offline; the station comes back when the link heals', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    const { stations } = parseFixture({ stations: [{ token: 'H-1', stationId: 1, locks: [{ lockId: '1' }], behaviour: { link: 'perfect', heartbeatMs: 0 } }] });
    fleet = await startFleet({ stations, transport: TRANSPORTS[transport](broker), seed: 1, keepaliveSeconds: 1, control: false });
    const watcher = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    const statuses: string[] = [];
    watcher.on('message', (_topic, payload) => statuses.push((JSON.parse(payload.toString()) as { status: string }).status));
    await watcher.subscribeAsync('stations/H-1/status', { qos: 1 });
    try {
      await eventually(() => expect(statuses).toContain('online'), { what: 'the retained online status' });
      const station = fleet.get('H-1')!;
      fleet.link('H-1')!.set(LINK_PROFILES['half-open']);
      // Nothing closes: the broker hears nothing for 1.5 × 1 s and fires the will.
      await eventually(() => expect(statuses.at(-1)).toBe('offline'), { what: 'the broker to drop the silent station', timeout: 10_000 });
      await eventually(() => expect(station.connected).toBe(false), { what: 'the station to give up on its silent connection', timeout: 10_000 });
      fleet.link('H-1')!.set(LINK_PROFILES.perfect);
      await eventually(() => expect(station.connected).toBe(true), { what: 'the station to reconnect once the link heals', timeout: 15_000 });
      await eventually(() => expect(statuses.at(-1)).toBe('online'), { what: 'the online status again' });
    } finally {
      await watcher.endAsync();
    }
  });
});

describe.each(Object.keys(TRANSPORTS) as (keyof typeof TRANSPORTS)[])('a PUBACK lost to a half-open link (%s sessions)', (transport) => {
  it('brings the command again with DUP on the persistent session; the station acks it again and opens the lock once', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    const { stations } = parseFixture({
      defaults: { unlockDelayMs: 0, relockMs: 200, heartbeatMs: 0 },
      stations: [{ token: 'P-1', stationId: 1, locks: [{ lockId: '1' }, { lockId: '2' }], behaviour: { link: 'perfect', session: 'persistent' } }],
    });
    const received: { commandId: string | undefined; online: boolean }[] = [];
    fleet = await startFleet({
      stations,
      transport: TRANSPORTS[transport](broker),
      seed: 1,
      keepaliveSeconds: 1,
      control: false,
      // The link goes half-open the moment the command arrives: the station's PUBACK (and ack) never leave.
      onCommand: (command) => {
        received.push({ commandId: command.command?.commandId, online: command.online });
        if (received.length === 1) fleet!.link('P-1')!.set(LINK_PROFILES['half-open']);
      },
    });
    const backend = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    const seen: { topic: string; json: { commandId?: string; status?: string; accepted?: boolean } }[] = [];
    backend.on('message', (topic, payload) => seen.push({ topic, json: JSON.parse(payload.toString()) }));
    await backend.subscribeAsync(['stations/P-1/acks', 'stations/P-1/locks/+/state'], { qos: 1 });
    try {
      const commandId = 'dup-under-loss-1';
      await backend.publishAsync('stations/P-1/locks/1/unlock', JSON.stringify({ commandId, sentAt: new Date().toISOString() }), { qos: 1 });
      await eventually(() => expect(received).toHaveLength(1), { what: 'the command to reach the station' });
      const station = fleet.get('P-1')!;
      await eventually(() => expect(station.connected).toBe(false), { what: 'the station to give up on its silent connection', timeout: 10_000 });
      fleet.link('P-1')!.set(LINK_PROFILES.perfect);
      // Back on its persistent session, the broker sends the unacknowledged command again (MQTT 3.1.1, 4.4).
      await eventually(() => expect(received).toHaveLength(2), { what: 'the command again after the reconnect', timeout: 15_000 });
      expect(received.map((r) => r.commandId)).toEqual([commandId, commandId]);
      await eventually(() => expect(seen.filter((m) => m.topic === 'stations/P-1/acks' && m.json.commandId === commandId).length).toBeGreaterThan(0), { what: 'an ack' });
      expect(seen.filter((m) => m.topic === 'stations/P-1/acks').every((m) => m.json.accepted === true)).toBe(true);
      // A later command to lock 2, run to its end: any second opening of lock 1 would have come before.
      await backend.publishAsync('stations/P-1/locks/2/unlock', JSON.stringify({ commandId: 'later-1', sentAt: new Date().toISOString() }), { qos: 1 });
      await eventually(() => expect(seen.some((m) => m.topic === 'stations/P-1/locks/2/state' && m.json.status === 'locked' && seen.some((o) => o.topic === 'stations/P-1/locks/2/state' && o.json.status === 'unlocked'))).toBe(true), {
        what: 'lock 2 to open and close',
      });
      expect(seen.filter((m) => m.topic === 'stations/P-1/locks/1/state' && m.json.status === 'unlocked')).toHaveLength(1);
    } finally {
      await backend.endAsync();
    }
  });
});

describe('a slow link over TCP', () => {
  it('takes its latency each way on a station that dials the broker: the ack comes no sooner than down and back', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    const { stations } = parseFixture({
      defaults: { unlockDelayMs: 0, heartbeatMs: 0 },
      stations: [
        { token: 'SLOW-1', stationId: 1, locks: [{ lockId: '1' }], behaviour: { link: { latencyMs: 200 } } },
        { token: 'FAST-1', stationId: 2, locks: [{ lockId: '1' }] },
      ],
    });
    fleet = await startFleet({ stations, transport: TRANSPORTS.tcp(broker), seed: 1, control: false });
    const backend = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    const acks = new Map<string, number>();
    backend.on('message', (_topic, payload) => acks.set((JSON.parse(payload.toString()) as { commandId: string }).commandId, performance.now()));
    await backend.subscribeAsync('stations/+/acks', { qos: 1 });
    try {
      const roundTrip = async (token: string): Promise<number> => {
        const commandId = `${token}-${Math.random()}`;
        const sent = performance.now();
        await backend.publishAsync(`stations/${token}/locks/1/unlock`, JSON.stringify({ commandId, sentAt: new Date().toISOString() }), { qos: 1 });
        await eventually(() => expect(acks.has(commandId)).toBe(true), { what: `the ack of ${token}` });
        return acks.get(commandId)! - sent;
      };
      // Down 200 ms and the ack back up 200 ms: no ack can come sooner; a station without a link answers at once.
      expect(await roundTrip('SLOW-1')).toBeGreaterThanOrEqual(400);
      expect(await roundTrip('FAST-1')).toBeLessThan(400);
      expect(fleet.get('SLOW-1')!.snapshot().link).toBe('custom (200 ms)');
    } finally {
      await backend.endAsync();
    }
  });
});

describe('the link through the control plane', () => {
  it('shows in the snapshot and changes while the station runs; a station without one says how to give it one', async () => {
    sim = await startSimulator({
      fixture: {
        accounts: [{ ...ACCOUNT, stations: ['L-1', 'P-1'] }],
        stations: [
          { token: 'L-1', stationId: 1, locks: [{ lockId: '1' }], behaviour: { link: 'lte-m' } },
          { token: 'P-1', stationId: 2, locks: [{ lockId: '1' }] },
        ],
      },
    });
    const control = new ControlClient({ url: sim.controlUrl });
    expect((await control.station('L-1')).link).toBe('lte-m (75 ± 25 ms, 1 % loss, 375 kbit/s)');
    expect((await control.station('P-1')).link).toBeUndefined();
    expect((await control.setLink('L-1', { profile: 'nb-iot', lossPercent: 0 })).link).toBe('nb-iot (800 ± 400 ms, 26 kbit/s)');
    expect((await control.setLink('L-1', 'half-open')).link).toBe('half-open (carries nothing)');
    expect(sim.fleet.stations.get('L-1')!.link!.conditions?.halfOpen).toBe(true);
    await expect(control.setLink('P-1', 'nb-iot')).rejects.toThrow(/P-1 has no link of its own to change: give it one in the fixture/);
    await expect(control.setLink('L-1', { latencyMs: -1 } as never)).rejects.toThrow(/latencyMs/);
    await expect(control.setLink('L-1', 'dial-up' as never)).rejects.toThrow(/profile/);
  });
});
