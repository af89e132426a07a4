/**
 * The screen's size and cost: it fits 80×24, follows resizes, and with 10,000 stations draws only
 * the rows in view and redraws once per batch of events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.js';
import { Dashboard } from '../../src/dashboard/Dashboard.js';
import { FleetStore } from '../../src/dashboard/fleet-store.js';
import { ASCII_ICONS, EMOJI_ICONS, type IconSet } from '../../src/dashboard/format.js';
import { layoutFor } from '../../src/dashboard/layout.js';
import { COMPACT_HELP_KEYS, HELP_KEYS } from '../../src/dashboard/HelpOverlay.js';
import type { SimStation } from '../../src/client/sim-types.js';
import { makeStation, memoryControl } from './fake-control-plane.js';
import { eventually, renderInTerminal, settle, type TerminalRender } from './terminal.js';

function fleet(size: number): SimStation[] {
  return Array.from({ length: size }, (_, index) =>
    makeStation(index, {
      status: index % 7 === 0 ? 'offline' : 'online',
      batteryVoltage: 11 + (index % 17) / 10,
      locks: Array.from({ length: 1 + (index % 4) }, (_, lock) => ({
        lockId: String(lock + 1),
        status: lock === 2 ? 'jammed' : lock === 1 ? 'unlocked' : 'locked',
        lastUpdated: new Date().toISOString(),
        pending: lock === 3 ? 'opening' : null,
      })),
    }),
  );
}

let view: TerminalRender | undefined;
afterEach(() => {
  view?.instance.unmount();
  view = undefined;
});

function show(stations: SimStation[], size: { columns: number; rows: number }, icons: IconSet = ASCII_ICONS) {
  const store = new FleetStore();
  view = renderInTerminal(
    <Dashboard control={memoryControl(stations)} store={store} unlock={async () => ({ success: true })} clock={systemClock} icons={icons} title="http://sim" />,
    size,
  );
  return { view, store };
}

/** Terminal cells of a line: the lock emoji take two. */
function cells(line: string): number {
  let width = 0;
  for (const char of line) width += /\p{Extended_Pictographic}/u.test(char) && char !== '⚠' ? 2 : 1;
  return width;
}

const tableTokens = (frame: string): string[] => [...frame.matchAll(/^[› ] (ST-\d+) /gm)].map((match) => match[1]!);

describe('the dashboard screen', () => {
  it('fits 80×24, with emoji or ASCII icons', async () => {
    for (const icons of [EMOJI_ICONS, ASCII_ICONS]) {
      const { view: screen } = show(fleet(50), { columns: 80, rows: 24 }, icons);
      await eventually(() => expect(screen.lastFrame()).toContain('50 stations'));
      const lines = screen.lastFrame().split('\n');
      expect(lines.length).toBeLessThanOrEqual(23);
      for (const line of lines) expect(cells(line)).toBeLessThanOrEqual(80);
      expect(tableTokens(screen.lastFrame())).toHaveLength(layoutFor(80, 24).tableRows);
      screen.instance.unmount();
    }
  });

  it('follows resizes', async () => {
    const { view: screen } = show(fleet(100), { columns: 80, rows: 24 });
    await eventually(() => expect(screen.lastFrame()).toContain('100 stations'));
    screen.stdout.resize(120, 40);
    await eventually(() => expect(tableTokens(screen.lastFrame())).toHaveLength(layoutFor(120, 40).tableRows));
    const wide = screen.lastFrame().split('\n');
    expect(wide.length).toBeLessThanOrEqual(39);
    expect(Math.max(...wide.map(cells))).toBeGreaterThan(80);
    // Wide enough for the time in front of each log line.
    expect(screen.lastFrame()).toMatch(/^\d\d:\d\d:\d\d snapshot: 100 stations/m);

    screen.stdout.resize(80, 24);
    await eventually(() => expect(tableTokens(screen.lastFrame())).toHaveLength(layoutFor(80, 24).tableRows));
    for (const line of screen.lastFrame().split('\n')) expect(cells(line)).toBeLessThanOrEqual(80);
  });

  it('says so, whole, in a terminal too small for the frame, and shows the full screen once it grows', async () => {
    const { view: screen } = show(fleet(5), { columns: 30, rows: 24 });
    for (const [columns, rows] of [[30, 24], [80, 10], [39, 15], [40, 14], [38, 14]] as const) {
      screen.stdout.resize(columns, rows);
      await eventually(() => expect(screen.lastFrame()).toContain(`terminal too small (${columns}`));
      const lines = screen.lastFrame().replace(/\n$/, '').split('\n');
      // One line where it fits; wrapped, never cut, where it does not.
      expect(lines).toHaveLength(columns >= 60 ? 1 : 2);
      expect(lines.join(' ').replace(/\s+/g, ' ')).toContain('needs 40×15 · q quits');
      for (const line of lines) expect(cells(line)).toBeLessThanOrEqual(columns);
    }
    screen.stdout.resize(40, 15);
    await eventually(() => expect(screen.lastFrame()).toContain('5 stations'));
    const lines = screen.lastFrame().split('\n');
    expect(lines.length).toBeLessThanOrEqual(14);
    for (const line of lines) expect(cells(line)).toBeLessThanOrEqual(40);
  });

  it('clears the screen on a resize, so lines of the last frame the terminal rewrapped are not left behind', async () => {
    const { view: screen } = show(fleet(5), { columns: 39, rows: 13 });
    await eventually(() => expect(screen.lastFrame()).toContain('terminal too small (39×13)'));
    const before = screen.stdout.writes.length;
    screen.stdout.resize(30, 8);
    await eventually(() => expect(screen.lastFrame()).toContain('terminal too small (30×8)'));
    const after = screen.stdout.writes.slice(before);
    const cleared = after.findIndex((write) => write.includes('\u001B[2J'));
    expect(cleared).toBeGreaterThanOrEqual(0);
    // The new notice is drawn after the clear, not before it.
    expect(after.slice(cleared + 1).some((write) => write.includes('(30×8)'))).toBe(true);
  });

  it('widens the token column on a wide terminal so long tokens with a common prefix stay apart', async () => {
    const stations = Array.from({ length: 5 }, (_, index) => makeStation(index, { token: `warehouse-north-gate-000${index + 1}` }));
    const { view: screen } = show(stations, { columns: 160, rows: 30 });
    await eventually(() => expect(screen.lastFrame()).toContain('5 stations'));
    const shown = [...screen.lastFrame().matchAll(/^[› ] (warehouse\S*) /gm)].map((match) => match[1]);
    expect(shown).toEqual(stations.map((station) => station.token));
    // At 80 columns the locks keep their room and the token is cut to 16 cells, in the middle, so
    // the rows still differ.
    screen.stdout.resize(80, 24);
    await eventually(() => expect(screen.lastFrame()).toMatch(/^› warehous…te-0001 /m));
    expect(screen.lastFrame()).toMatch(/^ {2}warehous…te-0005 /m);
  });

  it('shows an unlock chain whole at 80 columns, and wraps a long one at its steps with its outcome', async () => {
    const { view: screen, store } = show(fleet(5), { columns: 80, rows: 24 });
    await eventually(() => expect(screen.lastFrame()).toContain('5 stations'));
    const time = (ms: number): string => new Date(Date.parse('2026-11-22T08:20:00.000Z') + ms).toISOString();
    const ok = store.beginUnlock('ST-1003', '3');
    store.apply({ seq: 2, time: time(0), type: 'command.sent', token: 'ST-1003', lockId: '3', commandId: 'c1' });
    store.apply({ seq: 3, time: time(2), type: 'command.acked', token: 'ST-1003', lockId: '3', commandId: 'c1', pending: 'opening', ms: 2 });
    store.finishUnlock(ok, { success: true });
    store.apply({ seq: 4, time: time(2263), type: 'lock.state', token: 'ST-1003', lockId: '3', status: 'unlocked', pending: 'open', lastUpdated: time(2263) });
    store.apply({ seq: 5, time: time(7263), type: 'lock.state', token: 'ST-1003', lockId: '3', status: 'locked', pending: null, lastUpdated: time(7263) });
    const late = store.beginUnlock('ST-1003', '2');
    store.apply({ seq: 6, time: time(8000), type: 'command.sent', token: 'ST-1003', lockId: '2', commandId: 'c2' });
    store.finishUnlock(late, { success: false, message: 'Station did not acknowledge the command in time' });
    store.apply({ seq: 7, time: time(13001), type: 'command.timeout', token: 'ST-1003', lockId: '2', commandId: 'c2', ms: 5001 });
    await eventually(() => expect(screen.lastFrame()).toContain('· failed: Station did not acknowledge the command in time'));
    const frame = screen.lastFrame();
    expect(frame).toContain('ST-1003/3 unlock → acked +2ms → unlocked +2261ms → locked +5000ms · ok');
    // With its time (at 80 columns too), the outcome wrapped under the text rather than cut.
    expect(frame).toMatch(/^08:20:08 ST-1003\/2 unlock → timed out \+5001ms\n {11}· failed: Station did not acknowledge the command in time$/m);
    for (const line of frame.split('\n')) expect(cells(line)).toBeLessThanOrEqual(80);
  });

  it('draws every help line whole in a short terminal, scrolling what does not fit', async () => {
    const { view: screen } = show(fleet(5), { columns: 80, rows: 24 });
    await eventually(() => expect(screen.lastFrame()).toContain('5 stations'));
    screen.stdin.type('?');
    await eventually(() => expect(screen.lastFrame()).toContain('close this help'));
    for (const [columns, rows] of [[40, 15], [60, 15], [80, 15], [40, 16], [80, 17], [60, 18], [80, 19], [80, 20]] as const) {
      screen.stdout.resize(columns, rows);
      await eventually(() => expect(screen.lastFrame()).toContain(`${columns >= 60 ? '5 stations' : 'station-sim'}`));
      await settle(20);
      const seen = new Set<string>();
      // Down as far as it goes (a few more presses than lines), then back to the top.
      for (let press = 0; press < 12; press += 1) {
        const frame = screen.lastFrame().replace(/\n$/, '');
        const lines = frame.split('\n');
        expect(lines.length, `${columns}×${rows}`).toBeLessThanOrEqual(rows - 1);
        for (const line of lines) {
          expect(cells(line)).toBeLessThanOrEqual(columns);
          seen.add(line.replace(/^│ | *│$/g, '').trimEnd());
        }
        screen.stdin.type('j');
        await settle(20);
      }
      const full = HELP_KEYS.every(([keys, what]) => seen.has(`${keys.padEnd(11)}${what}`));
      const compact = COMPACT_HELP_KEYS.every(([keys, what]) => seen.has(`${keys.padEnd(9)}${what}`));
      expect(full || compact, `${columns}×${rows}: ${[...seen].join('\n')}`).toBe(true);
      for (let press = 0; press < 12; press += 1) screen.stdin.type('k');
      await settle(20);
    }
  });

  it('draws only the rows in view of a 10,000-station fleet, and moves through it quickly', async () => {
    const started = performance.now();
    const { view: screen } = show(fleet(10_000), { columns: 80, rows: 24 });
    await eventually(() => expect(screen.lastFrame()).toContain('10000 stations'));
    const firstFrameMs = performance.now() - started;
    expect(tableTokens(screen.lastFrame())).toEqual(Array.from({ length: layoutFor(80, 24).tableRows }, (_, index) => `ST-${1000 + index}`));

    const moveStarted = performance.now();
    for (let index = 0; index < 200; index += 1) screen.stdin.type('j');
    screen.stdin.type('G');
    await eventually(() => expect(screen.lastFrame()).toMatch(/^› ST-10999 /m));
    const moveMs = performance.now() - moveStarted;
    expect(tableTokens(screen.lastFrame())).toHaveLength(layoutFor(80, 24).tableRows);
    expect(screen.lastFrame()).toContain('10000/10000');

    // Generous bounds for a loaded CI machine; drawing all 10,000 rows takes seconds, not this.
    expect(firstFrameMs).toBeLessThan(2000);
    expect(moveMs).toBeLessThan(2000);
  });

  it('redraws once per batch of events, not once per event', async () => {
    const stations = fleet(10_000);
    const { view: screen, store } = show(stations, { columns: 80, rows: 24 });
    await eventually(() => expect(screen.lastFrame()).toContain('10000 stations'));
    await settle(150);
    const before = screen.renders;
    const time = new Date().toISOString();
    for (const [index, station] of stations.entries()) {
      store.apply({ seq: index + 2, time, type: 'station.status', token: station.token, status: 'offline', batteryVoltage: 11.9, lastConnection: time });
    }
    await eventually(() => expect(screen.lastFrame()).toContain('0 online, 10000 offline'));
    expect(screen.renders - before).toBeLessThanOrEqual(3);
  });
});

describe('a station on a shaped link', () => {
  it('shows its link in the station detail', async () => {
    const stations = [makeStation(0, { link: 'nb-iot (800 ± 400 ms, 2 % loss, 26 kbit/s)' }), makeStation(1)];
    const { view: screen } = show(stations, { columns: 120, rows: 40 });
    await eventually(() => expect(screen.lastFrame()).toContain('link nb-iot (800 ± 400 ms, 2 % loss, 26 kbit/s)'));
    // The next station has no link of its own: nothing is said.
    screen.stdin.type('j');
    await eventually(() => expect(screen.lastFrame()).toMatch(/^› ST-1001 /m));
    expect(screen.lastFrame()).not.toContain('link ');
  });
});
