/**
 * What the screen says about the event stream itself: a reconnect counted down, the fleet marked
 * as last seen while the stream is down, and a log line when it is lost and when it is back. The
 * stream is driven by hand and time by a manual clock, so the 9 s wait costs nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.js';
import type { DashboardControl, EventStreamHandlers } from '../../src/client/control-client.js';
import { Dashboard } from '../../src/dashboard/Dashboard.js';
import { FleetStore } from '../../src/dashboard/fleet-store.js';
import { ASCII_ICONS } from '../../src/dashboard/format.js';
import { makeStation } from './fake-control-plane.js';
import { eventually, renderInTerminal, type TerminalRender } from './terminal.js';

const T0 = Date.parse('2026-11-22T08:20:00.000Z');

let view: TerminalRender | undefined;
afterEach(() => {
  view?.instance.unmount();
  view = undefined;
});

function setup() {
  const clock = new ManualClock(T0);
  const stations = [makeStation(1), makeStation(2, { status: 'offline' })];
  let handlers: EventStreamHandlers | undefined;
  const never = (): Promise<never> => new Promise(() => undefined);
  const control: DashboardControl = {
    health: async () => ({ ready: true, stations: { total: 2, online: 1, offline: 1 } }),
    station: never,
    setConnection: never,
    setBattery: never,
    setLink: never,
    reboot: never,
    physical: never,
    addFault: never,
    clearFaults: never,
    addApiFault: never,
    apiFaults: never,
    clearApiFaults: never,
    subscribe: (given) => {
      handlers = given;
      return { close: () => undefined };
    },
  };
  const store = new FleetStore({ clock });
  view = renderInTerminal(
    <Dashboard control={control} store={store} unlock={async () => ({ success: true })} clock={clock} icons={ASCII_ICONS} title="http://sim" flushIntervalMs={10} />,
    { columns: 80, rows: 24 },
  );
  const screen = view;
  const stream = (): EventStreamHandlers => handlers!;
  const connect = (): void => {
    stream().onState?.({ phase: 'open' });
    stream().onEvent({ seq: 1, time: new Date(clock.now()).toISOString(), type: 'snapshot', stations });
  };
  /** Moves the manual clock, a second at a time as the dashboard ticks, and lets React draw. */
  const advance = async (ms: number): Promise<void> => {
    for (let left = ms; left > 0; left -= Math.min(left, 1000)) {
      clock.advance(Math.min(left, 1000));
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { clock, screen, stream, connect, advance };
}

describe('the event stream on screen', () => {
  it('counts a reconnect down, marks the fleet as last seen while the stream is down, and logs losing and getting it back', async () => {
    const { clock, screen, stream, connect, advance } = setup();
    await eventually(() => expect(stream()).toBeDefined());
    connect();
    await advance(20);
    await eventually(() => expect(screen.lastFrame()).toContain('events live'));
    expect(screen.lastFrame()).toContain('2 stations: 1 online, 1 offline');

    const reason = 'connect ECONNREFUSED 127.0.0.1:8080';
    stream().onState?.({ phase: 'waiting', attempt: 4, retryInMs: 9000, retryAt: clock.now() + 9000, reason });
    await advance(20);
    await eventually(() => expect(screen.lastFrame()).toContain(`events: reconnecting in 9s (${reason})`));
    const frame = screen.lastFrame();
    expect(frame).toContain('2 stations, last seen: 1 online, 1 offline');
    expect(frame).toContain('online (last seen)');
    expect(frame).toContain(`events lost: ${reason} · reconnecting`);

    await advance(3000);
    await eventually(() => expect(screen.lastFrame()).toContain('events: reconnecting in 6s'));
    await advance(6000);
    await eventually(() => expect(screen.lastFrame()).toContain('events: reconnecting… ('));

    // Open but without its snapshot yet: still as last seen.
    stream().onState?.({ phase: 'open' });
    await advance(20);
    await eventually(() => expect(screen.lastFrame()).toContain('events: waiting for snapshot'));
    expect(screen.lastFrame()).toContain('last seen: 1 online');
    connect();
    await advance(20);
    await eventually(() => expect(screen.lastFrame()).toContain('events live'));
    expect(screen.lastFrame()).toContain('events back: live again');
    expect(screen.lastFrame()).not.toContain('last seen');
  });
});
