/**
 * What a presenter needs of the dashboard (issue 20): where everything is, faults from the keyboard,
 * which account unlocks, one log line per action, a log that scrolls and is searched, the fleet in
 * numbers. Against the fake control plane (real HTTP and WebSocket on port 0), with keys.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { systemClock } from '../../src/shared/clock.js';
import { ControlClient } from '../../src/client/control-client.js';
import { Dashboard, type DashboardProps } from '../../src/dashboard/Dashboard.js';
import type { DashboardAccount, UnlockFunction } from '../../src/dashboard/dashboard-actions.js';
import { FleetStore } from '../../src/dashboard/fleet-store.js';
import { ASCII_ICONS } from '../../src/dashboard/format.js';
import { makeStation, startFakeControlPlane, type FakeControlPlane } from './fake-control-plane.js';
import { renderDashboard } from './render-dashboard.js';
import { KEYS, eventually, stripAnsi } from './terminal.js';

let fake: FakeControlPlane | undefined;
let unmount: (() => void) | undefined;
afterEach(async () => {
  unmount?.();
  unmount = undefined;
  await fake?.close();
  fake = undefined;
});

async function setup(props: Partial<DashboardProps> = {}, stations = 5) {
  fake = await startFakeControlPlane({ stations: Array.from({ length: stations }, (_, index) => makeStation(index)) });
  const store = new FleetStore();
  const { frame, press, unmount: close } = renderDashboard(fake, { store, ...props });
  unmount = close;
  await eventually(() => expect(frame()).toContain('events live'));
  return { fake, store, frame, press };
}

const account = (email: string, stations?: string[], unlock: UnlockFunction = async () => ({ success: true })): DashboardAccount & { unlock: ReturnType<typeof vi.fn<UnlockFunction>> } => ({
  email,
  unlock: vi.fn<UnlockFunction>(unlock),
  ...(stations ? { stations } : {}),
});

describe('the dashboard for a presenter', () => {
  it('names the broker health reports, embedded or not, and keeps start-up notices for i', async () => {
    const { frame, press } = await setup({ notices: ['MQTT port 1883 is taken (a local Mosquitto?); the embedded broker uses 41234 instead'] });
    // The fake's health names no broker: the address line has the API and the control plane.
    expect(frame()).toMatch(/^API http:\/\/127\.0\.0\.1:\d+ · control http:\/\/127\.0\.0\.1:\d+\/sim\/v1 · 1 notice: i$/m);
    await press('i');
    await eventually(() => expect(frame()).toContain('! MQTT port 1883 is taken (a local Mosquitto?); the embedded broker uses 41234'));
    await press(KEYS.escape);
    await eventually(() => expect(frame()).not.toContain('! MQTT port'));
  });

  it('attached, takes the MQTT address and the broker kind from /sim/v1/health', async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(0)] });
    fake.health = { ...fake.health, mqtt: { url: 'mqtts://broker.example:8883', embedded: false } };
    const view = render(
      <Dashboard control={new ControlClient({ url: fake.url })} store={new FleetStore()} clock={systemClock} icons={ASCII_ICONS} title={fake.url} flushIntervalMs={10} healthPollMs={20} />,
    );
    unmount = view.unmount;
    await eventually(() => expect(stripAnsi(view.lastFrame() ?? '')).toMatch(/^MQTT mqtts:\/\/broker\.example:8883 \(external, TLS\) · API http:\/\/127\.0\.0\.1:\d+/m));
  });

  it('shows in the header whom u unlocks as, switches with a, and goes as an account that can reach the station', async () => {
    const alice = account('alice@example.com', ['ST-1000', 'ST-1001']);
    const bob = account('bob@example.com', ['ST-1001', 'ST-1004']);
    const { frame, press } = await setup({ accounts: [alice, bob] });
    expect(frame()).toContain('u as alice@example.com (a)');
    expect(frame()).toMatch(/locks 1:L 2:L · u as alice@example\.com$/m);
    await press('u');
    await eventually(() => expect(alice.unlock).toHaveBeenCalledWith('ST-1000', '1'));

    // ST-1004 is bob's only: u goes as bob, and both the detail and the log say so.
    await press('G');
    await eventually(() => expect(frame()).toContain('u as bob@example.com (alice@example.com cannot reach it)'));
    await press('u');
    await eventually(() => expect(bob.unlock).toHaveBeenCalledWith('ST-1004', '1'));
    await eventually(() => expect(frame()).toContain('ST-1004/1 unlock as bob@example.com requested · ok'));

    // ST-1003 is nobody's: said as a fact, and no unlock is tried.
    await press('k');
    await eventually(() => expect(frame()).toContain('no account can reach ST-1003'));
    await press('u');
    await eventually(() => expect(frame()).toContain('no account of the fixture can reach ST-1003: nothing to unlock as'));
    expect(alice.unlock).toHaveBeenCalledTimes(1);
    expect(bob.unlock).toHaveBeenCalledTimes(1);

    await press('a');
    await eventually(() => expect(frame()).toContain('u as bob@example.com (a)'));
    await press('a');
    await eventually(() => expect(frame()).toContain('u as alice@example.com (a)'));
  });

  it('says an account cannot reach a station where the API answers "Station not found" for one of the fleet', async () => {
    const carol = account('carol@example.com', undefined, async () => ({ success: false, message: 'Station not found' }));
    const { frame, press } = await setup({ accounts: [carol] });
    await press('u');
    // Wrapped at its outcome where the line is too short: read as one line.
    await eventually(() => expect(frame().replace(/\n +/g, ' ')).toContain('ST-1000/1 unlock requested · carol@example.com cannot reach ST-1000 (not one of its stations)'));
    expect(frame()).not.toContain('failed: Station not found');
  });

  it('adds station faults to the lock or the whole station, /v1 faults for the station, lists them and clears them', async () => {
    const { fake, frame, press } = await setup({ unlock: async () => ({ success: true }) });
    await press('f');
    await eventually(() => expect(frame()).toContain('Faults on ST-1000 lock 1'));
    expect(frame()).toContain('1 dropCommands');
    expect(frame()).toContain('6 duplicateState');
    await press('1');
    await eventually(() => expect(frame()).toContain('ST-1000/1 fault dropCommands added: ok'));
    await eventually(() => expect(frame()).toContain('in force: dropCommands lock 1 (f1)'));
    await press('l', '2');
    await eventually(() => expect(frame()).toContain('ST-1000 fault delayAcks added: ok'));
    expect(frame()).toContain('Faults on ST-1000 (every lock)');
    await press('7');
    await eventually(() => expect(frame()).toContain('ST-1000 /v1 unlock fault 503 added: ok'));
    await eventually(() => expect(frame()).toMatch(/\/v1: 503 unlock ST-1000 \(api-\d+\)/));
    await press('c', '0');
    await eventually(() => expect(frame()).toContain('ST-1000 faults cleared: ok'));
    await eventually(() => expect(frame()).toContain('/v1 faults cleared: ok'));
    await eventually(() => expect(frame()).toContain('in force: no station faults · /v1: none'));
    const writes = fake.requests.filter((request) => request.method !== 'GET').map(({ method, url, body }) => ({ method, url, body }));
    expect(writes).toEqual([
      { method: 'POST', url: '/sim/v1/stations/ST-1000/faults', body: { kind: 'dropCommands', lockId: '1' } },
      { method: 'POST', url: '/sim/v1/stations/ST-1000/faults', body: { kind: 'delayAcks', delayMs: 2000 } },
      { method: 'POST', url: '/sim/v1/api-faults', body: { route: 'POST /v1/stations/:station_token/locks/:lock_id/unlock', kind: 'status', status: 503, token: 'ST-1000' } },
      { method: 'DELETE', url: '/sim/v1/stations/ST-1000/faults', body: undefined },
      { method: 'DELETE', url: '/sim/v1/api-faults', body: undefined },
    ]);
    // Esc closes the menu: the table is back.
    await press(KEYS.escape);
    await eventually(() => expect(frame()).toMatch(/^› ST-1000 /m));
  });

  it('writes one line per action: the control event and the state it causes join it', async () => {
    const { fake, frame, press } = await setup({ unlock: async () => ({ success: true }) });
    await press('o');
    await eventually(() => expect(frame()).toContain('ST-1000 → offline: ok'));
    const time = new Date().toISOString();
    fake.push({ type: 'control', token: 'ST-1000', action: 'offline' });
    fake.push({ type: 'station.status', token: 'ST-1000', status: 'offline', batteryVoltage: 12.41, lastConnection: time });
    // Someone else's action is still said.
    fake.push({ type: 'control', token: 'ST-1002', action: 'offline' });
    await eventually(() => expect(frame()).toContain('control ST-1002: offline'));
    expect(frame()).not.toContain('control ST-1000');
    expect(frame()).not.toMatch(/ST-1000 offline$/m);
  });

  it('scrolls the log with [ and ], and searches it as the search is typed', async () => {
    const { fake, frame, press } = await setup({ unlock: async () => ({ success: true }) });
    for (let index = 0; index < 30; index += 1) fake.push({ type: 'control', token: `ST-10${String(index).padStart(2, '0')}`, action: `step ${index}` });
    await eventually(() => expect(frame()).toContain('control ST-1029: step 29'));
    await press('[');
    await eventually(() => expect(frame()).toMatch(/── events · \d+ newer below/));
    expect(frame()).not.toContain('step 29');
    await press(']', ']', ']', ']', ']', ']', ']', ']');
    await eventually(() => expect(frame()).toContain('step 29'));
    await press('e', '1', '7');
    // Applied as typed, before Enter.
    await eventually(() => expect(frame()).toContain('search "17": 1 of'));
    expect(frame()).toContain('control ST-1017: step 17');
    expect(frame()).not.toContain('step 16');
    await press(KEYS.enter, KEYS.escape);
    await eventually(() => expect(frame()).toContain('step 29'));
    expect(frame()).not.toContain('search "');
  });

  it('shows the fleet in numbers on s: counts by status, stations with faults, the slowest unlocks', async () => {
    const { fake, store, frame, press } = await setup({ unlock: async () => ({ success: true }) });
    fake.stations.set('ST-1002', { ...fake.stations.get('ST-1002')!, faults: [{ id: 'f1', kind: 'reject', reason: 'busy' }] });
    // A control event makes the dashboard fetch the station again (faults travel in no event).
    fake.push({ type: 'control', token: 'ST-1002', action: 'fault reject' });
    const t0 = Date.now() - 10_000;
    const at = (ms: number): string => new Date(t0 + ms).toISOString();
    for (const [index, [lockId, openMs]] of ([['1', 900], ['2', 2600]] as const).entries()) {
      fake.push({ type: 'command.sent', token: 'ST-1001', lockId, commandId: `c${index}`, time: at(index * 10) });
      fake.push({ type: 'command.acked', token: 'ST-1001', lockId, commandId: `c${index}`, pending: 'opening', ms: 5, time: at(index * 10 + 5) });
      fake.push({ type: 'lock.state', token: 'ST-1001', lockId, status: 'unlocked', pending: 'open', lastUpdated: at(index * 10 + openMs), time: at(index * 10 + openMs) });
    }
    await eventually(() => expect(store.log.latencies.map((each) => each.ms)).toEqual([900, 2600]));
    await press('s');
    await eventually(() => expect(frame()).toContain('Fleet: 5 stations · 5 online · 0 offline'));
    await eventually(() => expect(frame()).toContain('stations with faults 1: ST-1002'));
    expect(frame()).toMatch(/unlocks, last 5 min 2 · median 900ms · p95 2\.6s/);
    expect(frame()).toMatch(/^ +2\.6s +ST-1001\/2 +at /m);
    expect(frame()).toMatch(/^ +900ms +ST-1001\/1 +at /m);
    // The status line draws the fleet's latency as a sparkline (ASCII levels here).
    expect(frame()).toMatch(/unlocks 5m [ _.\-=*#]+ max 2\.6s/);
  });
});
