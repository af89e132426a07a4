/**
 * The dashboard screen against a fake control plane (real HTTP and WebSocket on port 0), driven
 * with keys through ink-testing-library.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { systemClock } from '../../src/shared/clock.js';
import { ControlClient } from '../../src/client/control-client.js';
import { Dashboard } from '../../src/dashboard/Dashboard.js';
import type { UnlockFunction } from '../../src/dashboard/dashboard-actions.js';
import { FleetStore } from '../../src/dashboard/fleet-store.js';
import { ASCII_ICONS } from '../../src/dashboard/format.js';
import { makeStation, startFakeControlPlane, type FakeControlPlane } from './fake-control-plane.js';
import { renderDashboard } from './render-dashboard.js';
import { KEYS, eventually, stripAnsi } from './terminal.js';
import { freePort } from '../helpers/free-port.js';

let fake: FakeControlPlane | undefined;
let unmount: (() => void) | undefined;
afterEach(async () => {
  unmount?.();
  unmount = undefined;
  await fake?.close();
  fake = undefined;
});

async function setup(options: { stations?: number; unlock?: UnlockFunction; ready?: boolean } = {}) {
  fake = await startFakeControlPlane({ stations: Array.from({ length: options.stations ?? 30 }, (_, index) => makeStation(index)) });
  if (options.ready === false) fake.health = { ready: false, stations: { total: 10, online: 3, offline: 1 } };
  const unlock = vi.fn<UnlockFunction>(options.unlock ?? (async () => ({ success: true })));
  const { frame, press, unmount: close } = renderDashboard(fake, { unlock });
  unmount = close;
  if (options.ready !== false) await eventually(() => expect(frame()).toContain('events live'));
  return { fake, unlock, frame, press };
}

/** The token on the row marked as selected. */
const selected = (frame: string): string | undefined => /^› (\S+)/m.exec(frame)?.[1];
/** Tokens of the table rows, top to bottom. */
const tableTokens = (frame: string): string[] => [...frame.matchAll(/^[› ] (ST-\d+) /gm)].map((match) => match[1]!);

describe('the dashboard', () => {
  it('moves the selection with j/k and the arrow keys, and scrolls to keep it in view', async () => {
    const { frame, press } = await setup();
    expect(selected(frame())).toBe('ST-1000');
    await press('j', 'j');
    await eventually(() => expect(selected(frame())).toBe('ST-1002'));
    await press(KEYS.down);
    await eventually(() => expect(selected(frame())).toBe('ST-1003'));
    await press('k', KEYS.up);
    await eventually(() => expect(selected(frame())).toBe('ST-1001'));
    await press('G');
    await eventually(() => expect(selected(frame())).toBe('ST-1029'));
    expect(tableTokens(frame())).not.toContain('ST-1000');
    expect(tableTokens(frame()).at(-1)).toBe('ST-1029');
    await press('g');
    await eventually(() => expect(selected(frame())).toBe('ST-1000'));
    expect(frame()).toContain('1/30');
  });

  it('unlocks the selected lock through the injected unlock and logs the result', async () => {
    const { frame, press, unlock } = await setup();
    await press('j', KEYS.right, 'u');
    await eventually(() => expect(unlock).toHaveBeenCalledWith('ST-1001', '2'));
    await eventually(() => expect(frame()).toContain('ST-1001/2 unlock requested · ok'));

    unlock.mockResolvedValueOnce({ success: false, message: 'Station is offline' });
    await press(KEYS.left, 'u');
    await eventually(() => expect(frame()).toContain('ST-1001/1 unlock requested · failed: Station is offline'));

    unlock.mockRejectedValueOnce(new Error('Invalid credentials'));
    await press(KEYS.tab, KEYS.tab, 'u');
    await eventually(() => expect(unlock).toHaveBeenLastCalledWith('ST-1001', '1'));
    await eventually(() => expect(frame()).toContain('ST-1001/1 unlock requested · failed: Invalid credentials'));

    // The /v1 API cannot be reached: fetch's own error, as an unlock that calls fetch gets it.
    const nobody = `http://127.0.0.1:${await freePort()}/v1/auth/login`;
    unlock.mockImplementationOnce(async () => {
      await fetch(nobody, { method: 'POST' });
      return { success: true };
    });
    await press('u');
    await eventually(() => expect(frame()).toContain('ST-1001/1 unlock requested · failed: cannot reach the /v1 API: ECONNREFUSED'));
    expect(frame()).not.toContain('fetch failed');
  });

  it('shows an unlock as requested → acked → unlocked → locked with the time of each step', async () => {
    const { fake, frame, press } = await setup();
    await press('u');
    await eventually(() => expect(frame()).toContain('ST-1000/1 unlock requested · ok'));
    const t0 = Date.parse('2026-11-22T08:20:00.000Z');
    const time = (ms: number): string => new Date(t0 + ms).toISOString();
    fake.push({ type: 'command.sent', token: 'ST-1000', lockId: '1', commandId: 'c-1', time: time(0) });
    fake.push({ type: 'command.acked', token: 'ST-1000', lockId: '1', commandId: 'c-1', pending: 'opening', ms: 12, time: time(12) });
    await eventually(() => expect(frame()).toContain('ST-1000/1 unlock → acked +12ms · ok'));
    fake.push({ type: 'lock.state', token: 'ST-1000', lockId: '1', status: 'unlocked', pending: 'open', lastUpdated: time(515), time: time(515) });
    fake.push({ type: 'lock.state', token: 'ST-1000', lockId: '1', status: 'locked', pending: null, lastUpdated: time(5519), time: time(5519) });
    await eventually(() =>
      expect(frame()).toContain('ST-1000/1 unlock → acked +12ms → unlocked +503ms → locked +5004ms · ok'),
    );
  });

  it('takes the station offline and back online through the control plane', async () => {
    const { fake, frame, press } = await setup();
    await press('o');
    await eventually(() => expect(frame()).toContain('ST-1000 → offline: ok'));
    expect(frame()).toMatch(/^› ST-1000 +1000 offline/m);
    await press('o');
    await eventually(() => expect(frame()).toContain('ST-1000 → online: ok'));
    const actions = fake.requests.filter((request) => request.method === 'POST');
    expect(actions.map(({ url, body }) => ({ url, body }))).toEqual([
      { url: '/sim/v1/stations/ST-1000/connection', body: { online: false } },
      { url: '/sim/v1/stations/ST-1000/connection', body: { online: true } },
    ]);
  });

  it('drains and charges the battery (back to its first voltage, not 12.60 V), jams and frees a lock, reboots, and logs failures', async () => {
    const { fake, frame, press } = await setup();
    await press('b');
    await eventually(() => expect(frame()).toContain('ST-1000 battery drain → 11.20V: ok'));
    await press('b');
    // Attached, the dashboard does not know the fixture: it charges back to the voltage it first saw.
    await eventually(() => expect(frame()).toContain('ST-1000 battery charge → 12.41V: ok'));
    await press('x');
    await eventually(() => expect(frame()).toContain('ST-1000/1 jam: ok'));
    await press('x');
    await eventually(() => expect(frame()).toContain('ST-1000/1 unjam: ok'));
    fake.failNext(504, 'Station did not respond');
    await press('r');
    await eventually(() => expect(frame()).toContain('ST-1000 reboot: Station did not respond'));
    expect(fake.requests.filter((request) => request.method === 'POST').map(({ url, body }) => ({ url, body }))).toEqual([
      { url: '/sim/v1/stations/ST-1000/battery', body: { voltage: 11.2 } },
      { url: '/sim/v1/stations/ST-1000/battery', body: { voltage: 12.41 } },
      { url: '/sim/v1/stations/ST-1000/locks/1/physical', body: { action: 'jam' } },
      { url: '/sim/v1/stations/ST-1000/locks/1/physical', body: { action: 'unjam' } },
      { url: '/sim/v1/stations/ST-1000/reboot', body: {} },
    ]);
  });

  it('filters by token substring as it is typed after /, Enter keeps it, Esc clears', async () => {
    const { frame, press } = await setup();
    await press('/', '1', '0');
    // Applied as it is typed: `10` matches every token.
    await eventually(() => expect(frame()).toContain('filter "10" 1/30'));
    await press('2', 'q', KEYS.backspace);
    await eventually(() => expect(frame()).toContain('/102'));
    // `q` was typed (and erased), not a quit; the table already shows the matches.
    await eventually(() => expect(tableTokens(frame())[0]).toBe('ST-1020'));
    expect(frame()).toContain('filter "102" 1/10');
    await press(KEYS.enter);
    await eventually(() => expect(frame()).toContain('filter "102" 1/10'));
    expect(tableTokens(frame())[0]).toBe('ST-1020');
    expect(tableTokens(frame()).every((token) => token.includes('102'))).toBe(true);
    await press('j');
    await eventually(() => expect(selected(frame())).toBe('ST-1021'));

    await press('/', KEYS.escape);
    // The selection stays on its station when the filter goes.
    await eventually(() => expect(frame()).toContain('22/30'));
    expect(frame()).not.toContain('filter "');
    expect(selected(frame())).toBe('ST-1021');
  });

  // Ink hands characters read in one chunk (key repeat, fast typing, a paste) over as one input.
  it('acts on every key of a chunk, in order: "jjj" moves three rows, "/102\\r" applies the filter', async () => {
    const { frame, press } = await setup();
    await press('jjj');
    await eventually(() => expect(selected(frame())).toBe('ST-1003'));
    await press('/102\rj');
    await eventually(() => expect(frame()).toContain('filter "102" 2/10'));
    expect(selected(frame())).toBe('ST-1021');
    // Typed into the filter, `q` is text, not a quit; DEL in the run erases it.
    await press('/', 'ab', 'q\u007f', '\u007f\u007f\u007f\r');
    await eventually(() => expect(frame()).not.toContain('filter "'));
  });

  it('shows the help overlay on ? and closes it with Esc', async () => {
    const { frame, press } = await setup();
    await press('?');
    await eventually(() => expect(frame()).toContain('jam / unjam the selected lock'));
    expect(tableTokens(frame())).toEqual([]);
    await press(KEYS.escape);
    await eventually(() => expect(tableTokens(frame())[0]).toBe('ST-1000'));
  });

  it('shows a progress bar while the fleet connects', async () => {
    const { fake, frame } = await setup({ ready: false });
    await eventually(() => expect(frame()).toMatch(/connecting fleet #+\.+ 4\/10/));
    fake.health = { ready: true, stations: { total: 10, online: 9, offline: 1 } };
    await eventually(() => expect(frame()).toContain('events live'));
    expect(frame()).not.toContain('connecting fleet');
  });

  it('with a refused control token shows the refusal, not a fleet forever connecting', async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(1)], controlToken: 'right-token' });
    const store = new FleetStore();
    const view = render(
      <Dashboard
        control={new ControlClient({ url: fake.url, controlToken: 'wrong-token' })}
        store={store}
        unlock={async () => ({ success: true })}
        clock={systemClock}
        icons={ASCII_ICONS}
        title={fake.url}
        flushIntervalMs={10}
        healthPollMs={20}
      />,
    );
    unmount = view.unmount;
    const frame = (): string => stripAnsi(view.lastFrame() ?? '');
    await eventually(() => expect(frame()).toContain('events refused: Control token is invalid'));
    expect(frame()).not.toContain('connecting fleet');
    expect(frame()).not.toContain('wrong-token');
  });

  it('without a control token where one is needed, says one is needed and how to give it, rather than that it is invalid', async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(1)], controlToken: 'right-token' });
    const view = render(
      <Dashboard
        control={new ControlClient({ url: fake.url })}
        store={new FleetStore()}
        unlock={async () => ({ success: true })}
        clock={systemClock}
        icons={ASCII_ICONS}
        title={fake.url}
        flushIntervalMs={10}
        healthPollMs={20}
      />,
    );
    unmount = view.unmount;
    const frame = (): string => stripAnsi(view.lastFrame() ?? '');
    // Whole in the log (the status line may be too narrow for it).
    await eventually(() =>
      expect(frame().replace(/\n +/g, ' ')).toMatch(/events refused: control token needed: pass --control-token or set STATION_SIM_CONTROL_TOKEN/),
    );
    expect(frame()).not.toContain('invalid');
    await expect(new ControlClient({ url: fake.url }).setBattery('ST-1001', 12)).rejects.toThrow(
      'control token needed: pass --control-token or set STATION_SIM_CONTROL_TOKEN',
    );
  });

  it('with no control plane to reach, says so without a fleet bar at 0/0', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const view = render(
      <Dashboard
        control={new ControlClient({ url: nobody })}
        store={new FleetStore()}
        unlock={async () => ({ success: true })}
        clock={systemClock}
        icons={ASCII_ICONS}
        title={nobody}
        flushIntervalMs={10}
        healthPollMs={20}
      />,
    );
    unmount = view.unmount;
    const frame = (): string => stripAnsi(view.lastFrame() ?? '');
    await eventually(() => expect(frame()).toContain('cannot reach the control plane: ECONNREFUSED'));
    expect(frame()).not.toContain('connecting fleet');
  });

  it('fetches the selected station in full, for faults and timers the stream does not carry', async () => {
    const { fake, frame, press } = await setup();
    const dueAt = new Date(Date.now() + 4000).toISOString();
    fake.stations.set('ST-1001', {
      ...fake.stations.get('ST-1001')!,
      faults: [{ id: 'f1', kind: 'delayAcks', delayMs: 500, lockId: '2' }],
      locks: [
        { lockId: '1', status: 'unlocked', lastUpdated: new Date().toISOString(), pending: 'open' },
        { lockId: '2', status: 'locked', lastUpdated: new Date().toISOString(), pending: null },
      ],
      timers: [{ kind: 'relock', lockId: '1', dueAt }],
    });
    await press('j');
    await eventually(() => expect(frame()).toContain('faults delayAcks 500ms lock 2 (f1)'));
    expect(frame()).toMatch(/lock 1 unlocked · open, relocks in \d\.\ds/);
  });
});
