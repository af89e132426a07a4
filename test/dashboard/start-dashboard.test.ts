/** `startDashboard`: refuses without a terminal; otherwise attaches, draws, and closes cleanly. */
import { afterEach, describe, expect, it, vi } from 'vitest';
// Ink's own chalk (a dependency of ink), to make it colour in a worker without a terminal.
import chalk from 'chalk';
import { startDashboard, type DashboardOptions } from '../../src/dashboard/start-dashboard.js';
import { NOT_A_TTY_MESSAGE } from '../../src/dashboard/not-a-tty.js';
import { DashboardUrlError } from '../../src/dashboard/dashboard-url.js';
import { ManualClock } from '../../src/shared/clock.js';
import { makeStation, startFakeControlPlane, type FakeControlPlane } from './fake-control-plane.js';
import { FakeStdin, FakeStdout, eventually, settle } from './terminal.js';

let fake: FakeControlPlane | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start({ before, ...overrides }: Partial<DashboardOptions> & { before?: (plane: FakeControlPlane) => void } = {}) {
  fake = await startFakeControlPlane({ stations: [makeStation(1), makeStation(2)], controlToken: 'sesame' });
  before?.(fake);
  const stdout = new FakeStdout(80, 24);
  const stdin = new FakeStdin();
  const dashboard = startDashboard({
    url: fake.url,
    controlToken: 'sesame',
    unlock: async () => ({ success: true }),
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    stderr: new FakeStdout(80, 24) as unknown as NodeJS.WriteStream,
    icons: 'ascii',
    flushIntervalMs: 10,
    healthPollMs: 20,
    ...overrides,
  });
  await fake.waitForConnections(1);
  // Let the snapshot reach the screen: one flush interval is enough on an idle machine, but the
  // full suite loaded both cores and 50 ms was once not enough (in CI Ink draws only on exit, so
  // there is no frame to wait for).
  await settle(200);
  return { fake, stdout, stdin, dashboard };
}

describe('startDashboard', () => {
  it('refuses when stdout is not a TTY, without drawing or connecting anything', () => {
    const write = vi.fn();
    const fetchSpy = vi.fn<typeof fetch>();
    const stdout = { isTTY: false, write } as unknown as NodeJS.WriteStream;
    expect(() => startDashboard({ url: 'http://127.0.0.1:9', unlock: vi.fn(), stdout, fetch: fetchSpy })).toThrow(new Error(NOT_A_TTY_MESSAGE));
    // `dashboard` has no --json to point to.
    expect(NOT_A_TTY_MESSAGE).toBe('the dashboard needs an interactive terminal (stdout is not a TTY); without one, use the control plane (/sim/v1) instead');
    expect(write).not.toHaveBeenCalled();
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('refuses a URL it cannot use, before drawing, and never repeats a password', () => {
    const write = vi.fn();
    const stdout = { isTTY: true, write } as unknown as NodeJS.WriteStream;
    const attempt = (url: string) => () => startDashboard({ url, unlock: vi.fn(), stdout });
    expect(attempt('127.0.0.1:8080')).toThrow(new DashboardUrlError('must start with http:// or https://, e.g. http://127.0.0.1:8080'));
    expect(attempt('localhost:8080')).toThrow(DashboardUrlError);
    expect(attempt('ws://127.0.0.1:8080')).toThrow(DashboardUrlError);
    expect(attempt('http://proxyuser:NOT-A-REAL-SECRET@127.0.0.1:9')).toThrow(
      'the simulator URL must not hold credentials (user:pass@): /sim/v1 takes a control token, not basic auth',
    );
    expect(write).not.toHaveBeenCalled();
  });

  it('attaches with the control token, draws the fleet, and quits on q', async () => {
    const { fake, stdout, stdin, dashboard } = await start();
    stdin.type('q');
    await dashboard.waitUntilExit();
    // Ink writes the last frame on exit at the latest (in CI it writes nothing before).
    expect(stdout.text()).toContain('ST-1002');
    expect(fake.requests.some((request) => request.url === '/sim/v1/health')).toBe(true);
    expect(fake.requests.every((request) => request.authorization === 'Bearer sesame')).toBe(true);
    await eventually(() => expect(fake.clients).toBe(0));
  });

  it('draws without colours when NO_COLOR is set, and with them otherwise', async () => {
    // Ink colours through chalk, which sees no terminal in a test worker: made to colour here, so
    // that only the dashboard's own choice can leave the colours out.
    const previous = chalk.level;
    chalk.level = 1;
    try {
      const colourCodes = (text: string): string[] => text.match(/\u001B\[(?:3[0-7]|9[0-7]|4[0-7])m/g) ?? [];
      for (const [env, coloured] of [[{ NO_COLOR: '1' }, false], [{ NO_COLOR: '' }, true]] as const) {
        const { stdout, stdin, dashboard, fake } = await start({ env });
        stdin.type('q');
        await dashboard.waitUntilExit();
        const codes = colourCodes(stdout.writes.join(''));
        if (coloured) expect(codes.length).toBeGreaterThan(0);
        else expect(codes).toEqual([]);
        // Selection and emphasis stay: they are not colours.
        expect(stdout.writes.join('')).toContain('\u001B[7m');
        await fake.close();
      }
    } finally {
      chalk.level = previous;
    }
  });

  it('quits on Ctrl-C', async () => {
    const { stdin, dashboard } = await start();
    stdin.type('\u0003');
    await dashboard.waitUntilExit();
  });

  it('aborts requests a hung server has not answered when it closes, instead of waiting for their timeout', async () => {
    const signals: AbortSignal[] = [];
    // A server that accepts requests and never answers them.
    const hung = vi.fn<typeof fetch>((_url, init) => {
      const signal = init!.signal!;
      signals.push(signal);
      return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    });
    const { stdin, dashboard } = await start({ fetch: hung });
    expect(signals.length).toBeGreaterThan(0);
    expect(signals.some((signal) => signal.aborted)).toBe(false);
    stdin.type('q');
    await dashboard.waitUntilExit();
    expect(signals.every((signal) => signal.aborted)).toBe(true);
  });

  it('draws ages against the simulator\'s clock when given one (--time-scale, --clock manual), not the wall clock', async () => {
    // makeStation's lastConnection is 2026-11-22T08:18:04.637Z; the simulator is 42 s past it.
    const simulated = new ManualClock(Date.parse('2026-11-22T08:18:46.637Z'));
    const { stdout, dashboard } = await start({ simulatedClock: simulated });
    // With CI set, Ink draws only the last frame, when the dashboard closes: look after stop().
    await dashboard.stop();
    expect(stdout.text()).toMatch(/ST-1001 .* 42s ago/);
  });

  it('attached, draws ages against the simulator\'s clock it reads from GET /sim/v1/clock, not the wall clock', async () => {
    // A manual simulator clock, 42 s past makeStation's lastConnection (2026-11-22T08:18:04.637Z).
    const { fake, stdout, dashboard } = await start({
      simulatorClockPollMs: 20,
      before: (plane) => {
        plane.simulatorClock = { now: '2026-11-22T08:18:46.637Z', manual: true };
      },
    });
    await eventually(() => expect(fake.requests.filter((request) => request.url === '/sim/v1/clock').length).toBeGreaterThan(1));
    // Anything that redraws (an event) draws on the time read; with CI set Ink draws only at the end.
    fake.push({ type: 'control', action: 'noop' });
    await settle(100);
    await dashboard.stop();
    expect(stdout.text()).toMatch(/ST-1001 .* 42s ago/);
    expect(fake.requests.every((request) => request.authorization === 'Bearer sesame')).toBe(true);
  });

  it('does not let React\'s development build pile up a performance entry per render', async () => {
    performance.clearMeasures();
    performance.clearMarks();
    // The trim runs on the dashboard's clock: each round moves it one trim interval on.
    const clock = new ManualClock();
    const { fake, dashboard } = await start({ performanceTrimMs: 20, clock });
    const entries = (): number => performance.getEntriesByType('measure').length + performance.getEntriesByType('mark').length;
    const counts: number[] = [];
    for (let round = 0; round < 5; round++) {
      for (let event = 0; event < 20; event++) fake.push({ type: 'control', action: 'noop' });
      // What React's development build records per render where console.timeStamp exists (not
      // under vitest's console): a measure, and marks of its own.
      for (let render = 0; render < 100; render++) {
        performance.mark(`render ${round}/${render}`);
        performance.measure(`\u200bDashboard ${round}/${render}`);
      }
      clock.advance(20);
      counts.push(entries());
    }
    await dashboard.stop();
    // Without the trim every round adds its 200 entries (1000 at the end); with it each round starts afresh.
    expect(Math.max(...counts)).toBeLessThan(200);
    performance.mark('after stop');
    clock.advance(60);
    // Stopped with the dashboard.
    expect(performance.getEntriesByName('after stop')).toHaveLength(1);
    performance.clearMarks();
  });

  it('stop() closes the screen and the event stream', async () => {
    const { fake, dashboard } = await start();
    await dashboard.stop();
    await dashboard.waitUntilExit();
    await eventually(() => expect(fake.clients).toBe(0));
  });
});
