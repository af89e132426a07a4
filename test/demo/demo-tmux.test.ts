/**
 * `station-sim demo` in a real terminal (tmux), with NO_COLOR=1 as the issue checks it: the caption
 * above the fleet, `space` pausing and resuming, `n` moving to the next step, `q` quitting; and at
 * 120×35, started paused, `n` all the way to the end with --exit-at-end.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_STORY } from '../../src/demo/demo-story.js';
import { screen, tmux, tmuxAvailable, waitForScreen as waitForTmuxScreen } from '../helpers/tmux.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SMALL = `station-sim-demo-80-${process.pid}`;
const LARGE = `station-sim-demo-120-${process.pid}`;

/** Waits for the demo's screen; the demo starts slowly on a loaded machine. */
const waitForScreen = (session: string, predicate: (text: string) => boolean, what: string, timeoutMs = 45_000) => waitForTmuxScreen(session, predicate, what, timeoutMs);

/** The caption's first line: its state word and step, e.g. `PAUSED 3/9`. */
function captionOf(text: string): { state: string; step: number; caption: string } | undefined {
  const match = /^ (PLAYING|PAUSED|END) (\d+)\/\d+ {2}(.*)$/m.exec(text);
  return match ? { state: match[1]!, step: Number(match[2]), caption: match[3]!.trim() } : undefined;
}

function start(session: string, width: number, height: number, args: string): void {
  // Ink draws only its last frame when CI is set; the terminal inside tmux is a real one.
  const command = `cd ${ROOT} && env -u CI NO_COLOR=1 ${process.execPath} dist/cli/main.js demo ${args}; echo EXITED-$?; sleep 60`;
  expect(tmux('new-session', '-d', '-s', session, '-x', String(width), '-y', String(height), command).status).toBe(0);
}

describe.runIf(tmuxAvailable("the demo's terminal test"))('station-sim demo in tmux', () => {
  afterAll(() => {
    tmux('kill-session', '-t', SMALL);
    tmux('kill-session', '-t', LARGE);
  });

  it('at 80×24: the caption plays, space pauses and resumes, n moves on, q quits', async () => {
    start(SMALL, 80, 24, '');
    const first = await waitForScreen(SMALL, (t) => captionOf(t)?.state === 'PLAYING' && t.includes('events live'), 'the dashboard with its caption');
    for (const line of first.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    expect(first).toMatch(/space pause · n next/);

    tmux('send-keys', '-t', SMALL, 'Space');
    const paused = captionOf(await waitForScreen(SMALL, (t) => captionOf(t)?.state === 'PAUSED', 'the caption to say PAUSED'))!;
    expect(screen(SMALL)).toMatch(/space resume · n step/);

    tmux('send-keys', '-t', SMALL, 'n');
    const moved = captionOf(await waitForScreen(SMALL, (t) => (captionOf(t)?.step ?? 0) > paused.step, 'n to show the next step'))!;
    expect(moved.state).toBe('PAUSED');
    expect(moved.caption).toBe(DEMO_STORY.steps[moved.step - 1]!.caption.slice(0, moved.caption.length));

    tmux('send-keys', '-t', SMALL, 'Space');
    await waitForScreen(SMALL, (t) => captionOf(t)?.state === 'PLAYING', 'space to resume');

    tmux('send-keys', '-t', SMALL, 'q');
    await waitForScreen(SMALL, (t) => t.includes('EXITED-0'), 'the demo to exit cleanly on q');
    // A start-up of several seconds on a loaded machine, and each wait has room for one.
  }, 180_000);

  it('at 120×35, started paused: each n shows one more step with its answer, to the end', async () => {
    start(LARGE, 120, 35, '--paused --exit-at-end');
    await waitForScreen(LARGE, (t) => captionOf(t)?.state === 'PAUSED' && captionOf(t)?.step === 1 && t.includes('events live'), 'the first caption, paused');
    // What the caption's second line says once the step has played: the API's answer.
    const answers: Record<number, RegExp> = {
      4: /│ lock 1 locked after 5\.00 s \(relock time\)/,
      5: /│ alice unlocks 2: 200 "Lock is jammed"/,
      6: /│ alice unlocks 1: 200 "Battery too low"/,
      7: /│ alice unlocks 1: 504 no ack in time, outcome unknown/,
      8: /│ alice unlocks 1: 200 "Station is offline"/,
    };
    const seen: string[] = [];
    for (let step = 2; step <= DEMO_STORY.steps.length; step += 1) {
      tmux('send-keys', '-t', LARGE, 'n');
      const text = await waitForScreen(LARGE, (t) => captionOf(t)?.step === step && (answers[step]?.test(t) ?? true), `step ${step} and its answer`);
      seen.push(captionOf(text)!.caption);
      for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(120);
    }
    expect(seen).toEqual(DEMO_STORY.steps.slice(1).map((step) => step.caption));
    tmux('send-keys', '-t', LARGE, 'n');
    await waitForScreen(LARGE, (t) => t.includes('EXITED-0'), 'the demo to close at its end (--exit-at-end)');
  }, 300_000);
});
