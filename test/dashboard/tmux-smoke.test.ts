/**
 * The real CLI in a real terminal: `station-sim up --dashboard` inside tmux, driven with
 * send-keys and read with capture-pane.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { screen as tmuxScreen, screenWithCodes, tmux, tmuxAvailable, waitForScreen as waitForTmuxScreen } from '../helpers/tmux.js';
import { CliProcess } from '../helpers/cli-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SESSION = `station-sim-smoke-${process.pid}`;
const SIGNAL_SESSION = `station-sim-signal-${process.pid}`;
const ATTACHED_SESSION = `station-sim-attached-${process.pid}`;

const screen = (session = SESSION) => tmuxScreen(session);

/** Waits for the screen to satisfy `predicate`; a timeout shows the last screen. */
const waitForScreen = (predicate: (text: string) => boolean, what: string, timeoutMs = 20_000, session = SESSION) => waitForTmuxScreen(session, predicate, what, timeoutMs);

describe.runIf(tmuxAvailable('the dashboard smoke test'))('dashboard in tmux', () => {
  afterAll(() => {
    tmux('kill-session', '-t', SESSION);
    tmux('kill-session', '-t', SIGNAL_SESSION);
    tmux('kill-session', '-t', ATTACHED_SESSION);
  });

  it('shows the fleet, unlocks from the keyboard, takes a station offline, and quits on q', async () => {
    // Ink renders nothing but the last frame when CI is set (it checks is-in-ci); the terminal
    // inside tmux is a real one, so the child runs without it.
    const command = `cd ${ROOT} && env -u CI ${process.execPath} dist/cli/main.js up --dashboard --fixture fixtures/ci.json --mqtt-port 0 --http-port 0; echo EXITED-$?; sleep 60`;
    expect(tmux('new-session', '-d', '-s', SESSION, '-x', '80', '-y', '24', command).status).toBe(0);
    // Starting takes a while on a loaded machine (tsx compiles, 25 stations connect).
    const first = await waitForScreen((t) => t.includes('CI-1') && t.includes('events live'), 'the fleet table', 45_000);
    expect(first).toMatch(/25 stations: 24 online, 1 offline · u as ci@example\.com/);
    // Where the broker is, for mosquitto_sub, and what kind it is.
    expect(first).toMatch(/^MQTT mqtt:\/\/127\.0\.0\.1:\d+ \(embedded\) · API http:\/\/127\.0\.0\.1:\d+/m);
    for (const line of first.split('\n')) expect(line.length).toBeLessThanOrEqual(80);

    tmux('send-keys', '-t', SESSION, 'u');
    // With its time at 80 columns, and no login or route lines under it.
    const unlocked = await waitForScreen((t) => /^\d\d:\d\d:\d\d CI-1\/1 unlock → acked .*→ unlocked .*→ locked/m.test(t), 'the unlock chain in the log');
    expect(unlocked).not.toContain('/v1/auth/login');

    tmux('send-keys', '-t', SESSION, 'o');
    const offline = await waitForScreen((t) => /CI-1 → offline: ok/.test(t), 'the offline action result');
    // One line: the control event and the status it causes are in it.
    expect(offline).not.toMatch(/control CI-1|CI-1 offline$/m);

    // Pressed together: each action still takes in its own events.
    tmux('send-keys', '-t', SESSION, 'o', 'f', '4');
    const faulted = await waitForScreen((t) => t.includes('CI-1/1 fault ackNoOpen added: ok') && t.includes('in force: ackNoOpen lock 1'), 'the fault added from the menu');
    expect(faulted).not.toContain('control CI-1');
    tmux('send-keys', '-t', SESSION, 'u');
    await waitForScreen((t) => /CI-1\/1 unlock → acked .*→ stays shut \(ackNoOpen\)/.test(t), 'the fault acting on an unlock');
    tmux('send-keys', '-t', SESSION, 'c', 'Escape', 's');
    const overview = await waitForScreen((t) => t.includes('Fleet: 25 stations') && t.includes('stations with faults none'), 'the fleet overview, the fault cleared');
    expect(overview).toMatch(/slowest unlocks \(request → unlocked\):\n +\d/);

    tmux('send-keys', '-t', SESSION, 'q');
    // Stopping 25 stations takes a while on a loaded machine.
    await waitForScreen((t) => t.includes('EXITED-0'), 'the CLI to exit cleanly', 40_000);
  }, 120_000);

  it('attached with dashboard --url to a simulator in another process, with NO_COLOR, at 120×35', async () => {
    const sim = new CliProcess(['up', '--fixture', 'fixtures/ci.json', '--http-port', '0', '--mqtt-port', '0', '--json']);
    try {
      const { apiUrl, mqttUrl } = await sim.readyJson();
      const command = `cd ${ROOT} && env -u CI NO_COLOR=1 STATION_SIM_PASSWORD=ci-password ${process.execPath} dist/cli/main.js dashboard --url ${apiUrl} --email ci@example.com; echo EXITED-$?; sleep 60`;
      expect(tmux('new-session', '-d', '-s', ATTACHED_SESSION, '-x', '120', '-y', '35', command).status).toBe(0);
      const first = await waitForScreen((t) => t.includes('events live') && t.includes('CI-1'), 'the attached dashboard', 45_000, ATTACHED_SESSION);
      // The broker as the other process's health names it.
      expect(first).toContain(`MQTT ${mqttUrl} (embedded) · API ${apiUrl} · control ${apiUrl}/sim/v1`);
      expect(first).toContain('u as ci@example.com');
      tmux('send-keys', '-t', ATTACHED_SESSION, 'u');
      await waitForScreen((t) => /CI-1\/1 unlock → acked .*→ unlocked/.test(t), 'the unlock chain', 20_000, ATTACHED_SESSION);
      // No colour at all: only bold, dim and inverse (and tmux's resets) are left.
      expect(screenWithCodes(ATTACHED_SESSION).match(/\u001B\[[0-9;]*m/g)?.filter((code) => /\[(?:[0-9;]*;)?(?:3[0-7]|4[0-7]|9[0-7]|38|48)[;m]/.test(code)) ?? []).toEqual([]);
      tmux('send-keys', '-t', ATTACHED_SESSION, 'q');
      await waitForScreen((t) => t.includes('EXITED-0'), 'the dashboard to exit', 8000, ATTACHED_SESSION);
    } finally {
      await sim.signal('SIGTERM');
    }
  }, 90_000);

  it('up --dashboard draws ages on the simulator\'s clock, and closes and exits 0 on SIGTERM', async () => {
    const command = `cd ${ROOT} && env -u CI ${process.execPath} dist/cli/main.js up --dashboard --clock manual --fixture fixtures/ci.json --mqtt-port 0 --http-port 0; echo EXITED-$?; sleep 60`;
    expect(tmux('new-session', '-d', '-s', SIGNAL_SESSION, '-x', '80', '-y', '24', command).status).toBe(0);
    await waitForScreen((t) => t.includes('events live') && t.includes('CI-1'), 'the dashboard', 45_000, SIGNAL_SESSION);
    // The manual clock stands still: seconds later, on the wall clock, the station is still seen "0s ago".
    // A real sleep, the one honest way here: the claim is that wall time passing in a real process
    // (over two of the dashboard's 1 s repaints) moves no age, and that process has no clock to fake.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(screen(SIGNAL_SESSION)).toMatch(/^› CI-1 .* 0s ago/m);
    const shell = tmux('list-panes', '-t', SIGNAL_SESSION, '-F', '#{pane_pid}').stdout.trim();
    const node = spawnSync('pgrep', ['-P', shell], { encoding: 'utf8' }).stdout.trim().split('\n')[0]!;
    expect(node).toMatch(/^\d+$/);
    process.kill(Number(node), 'SIGTERM');
    // Before the fix the simulator stopped but the dashboard stayed mounted, and the process with it.
    await waitForScreen((t) => t.includes('EXITED-0'), 'the CLI to exit on SIGTERM', 8000, SIGNAL_SESSION);
  }, 90_000);
});
