/**
 * The demo's caption in the dashboard (a fake terminal, a control plane in memory): two lines under
 * the header that leave the frame inside 80×24, `space` and `n` handed to the story, and neither
 * taken while a filter is being typed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Dashboard } from '../../src/dashboard/Dashboard.js';
import { FleetStore } from '../../src/dashboard/fleet-store.js';
import { ASCII_ICONS } from '../../src/dashboard/format.js';
import { layoutFor } from '../../src/dashboard/layout.js';
import { DemoCaption } from '../../src/demo/demo-caption.js';
import { systemClock } from '../../src/shared/clock.js';
import { makeStation, memoryControl } from '../dashboard/fake-control-plane.js';
import { eventually, KEYS, renderInTerminal, settle, type TerminalRender } from '../dashboard/terminal.js';

/** A pacer as the caption sees it, counting the keys it is handed. */
function stubPacer() {
  const listeners = new Set<() => void>();
  const pacer = {
    paused: false,
    toggles: 0,
    nexts: 0,
    togglePause() {
      pacer.toggles += 1;
      pacer.paused = !pacer.paused;
      for (const listener of listeners) listener();
    },
    next() {
      pacer.nexts += 1;
    },
    onChange(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return pacer;
}

let view: TerminalRender | undefined;
afterEach(() => {
  view?.instance.unmount();
  view = undefined;
});

function show(size: { columns: number; rows: number }) {
  const pacer = stubPacer();
  const caption = new DemoCaption(pacer);
  const stations = Array.from({ length: 40 }, (_, index) => makeStation(index));
  view = renderInTerminal(
    <Dashboard control={memoryControl(stations)} store={new FleetStore()} unlock={async () => ({ success: true })} clock={systemClock} icons={ASCII_ICONS} title="http://sim" caption={caption} />,
    size,
  );
  const screen = view;
  const press = async (keys: string): Promise<void> => {
    screen.stdin.type(keys);
    await settle();
  };
  return { pacer, caption, screen, press };
}

const tableRows = (frame: string): number => [...frame.matchAll(/^[› ] ST-\d+ /gm)].length;

describe('the demo caption in the dashboard', () => {
  it('shows the step and its last answer under the header, and the frame still fits 80×24', async () => {
    const { caption, screen } = show({ columns: 80, rows: 24 });
    caption.onEvent({ kind: 'step', index: 4, total: 9, caption: 'The battery sinks to 11.3 V, under its 11.5 V cut-off', at: 15_500 });
    caption.onEvent({ kind: 'outcome', index: 4, ok: true, text: 'the long line', brief: 'alice unlocks 1: 200 "Battery too low"', at: 15_500 });
    await eventually(() => expect(screen.lastFrame()).toContain('40 stations'));
    const lines = screen.lastFrame().split('\n');
    expect(lines[2]).toBe(' PLAYING 5/9  The battery sinks to 11.3 V, under its 11.5 V cut-off');
    expect(lines[3]).toBe(' space pause · n next │ alice unlocks 1: 200 "Battery too low"');
    expect(lines.length).toBeLessThanOrEqual(23);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    // The two lines come out of the table, not off the bottom of the screen.
    expect(tableRows(screen.lastFrame())).toBe(layoutFor(80, 24, 2).tableRows);
    expect(screen.lastFrame()).toMatch(/q quit\s*$/);

    caption.onEvent({ kind: 'outcome', index: 4, ok: false, text: 'unlock ST-1001/1: 200 {"success":true} (expected …)', brief: 'short', at: 15_500 });
    await eventually(() => expect(screen.lastFrame()).toContain('│ FAIL unlock ST-1001/1: 200 {"success":true}'));
  });

  it('hands space and n to the story, each key of a chunk, but not while a filter is typed', async () => {
    const { pacer, caption, screen, press } = show({ columns: 100, rows: 30 });
    caption.onEvent({ kind: 'step', index: 0, total: 9, caption: 'The lock story', at: 0 });
    await eventually(() => expect(screen.lastFrame()).toContain(' PLAYING 1/9  The lock story'));

    await press(' ');
    await eventually(() => expect(screen.lastFrame()).toContain(' PAUSED 1/9  The lock story'));
    expect(screen.lastFrame()).toContain(' space resume · n step');
    await press('nn');
    await eventually(() => expect(pacer.nexts).toBe(2));

    // Typing a filter: its n is a letter of the filter, and space too.
    await press('/n ');
    await eventually(() => expect(screen.lastFrame()).toMatch(/\/n /));
    expect(pacer.nexts).toBe(2);
    expect(pacer.toggles).toBe(1);
    await press('\r');
    await eventually(() => expect(screen.lastFrame()).not.toMatch(/^› /m));
    // Escape clears the filter; then n is the story's again, and in a chunk up to the first other key.
    await press(KEYS.escape);
    await eventually(() => expect(screen.lastFrame()).toMatch(/^› ST-1000 /m));
    await press('n/');
    await eventually(() => expect(pacer.nexts).toBe(3));
    await press(KEYS.escape);

    // At the end the keys are the dashboard's alone.
    caption.onEvent({ kind: 'end', steps: 9, failures: 0, at: 45_000 });
    await eventually(() => expect(screen.lastFrame()).toContain(' END 1/9  The end.'));
    await press('n ');
    await press('j');
    await eventually(() => expect(screen.lastFrame()).toMatch(/^› ST-1001 /m));
    expect(pacer.nexts).toBe(3);
    expect(pacer.toggles).toBe(1);
  });
});
