/**
 * `station-sim demo` as a user runs it without a terminal (CI): the story as lines on stdout, exit
 * 0 at its end; the same seed prints the same lines. And its usage errors.
 */
import { describe, expect, it } from 'vitest';
import { runCliInProcess, runCliToEnd } from '../helpers/cli-process.js';
import { DEMO_STORY } from '../../src/demo/demo-story.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('the demo story unlocks an offline station on purpose, to show the refusal');

describe('station-sim demo', () => {
  it('prints the story as lines, each outcome as expected, and exits 0; one seed, one story', async () => {
    const first = await runCliToEnd(['demo', '--no-dashboard', '--fast', '--seed', '11']);
    expect(first.stderr).toMatch(/demo: API http:\/\/127\.0\.0\.1:\d+ · control .* · MQTT mqtt:\/\/127\.0\.0\.1:\d+ · seed 11/);
    expect(first.code).toBe(0);
    const lines = first.stdout.trimEnd().split('\n');
    const captions = lines.filter((line) => /^\[\s*[\d.]+ s\] \d+\/\d+ /.test(line)).map((line) => line.replace(/^\[\s*[\d.]+ s\] \d+\/\d+ /, ''));
    expect(captions).toEqual(DEMO_STORY.steps.map((step) => step.caption));
    expect(lines.filter((line) => line.includes(' FAIL '))).toEqual([]);
    expect(first.stdout).toContain('200 {"success":false,"message":"Lock is jammed"}');
    expect(first.stdout).toContain('200 {"success":false,"message":"Battery too low"}');
    expect(first.stdout).toMatch(/504 \{"message":"The station did not acknowledge the command in time/);
    expect(first.stdout).toContain('200 {"success":false,"message":"Station is offline"}');
    expect(lines.at(-1)).toMatch(/the end: 10 steps, every outcome as expected$/);

    // In this process this time: the same lines all the same.
    const second = await runCliInProcess(['demo', '--no-dashboard', '--fast', '--seed', '11']);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    // Two simulators start and play one after the other: room for a loaded machine.
  }, 90_000);

  it('refuses --paused without the dashboard, and a bad --seed, as usage errors', async () => {
    const paused = await runCliInProcess(['demo', '--no-dashboard', '--paused']);
    expect(paused.code).toBe(2);
    expect(paused.stderr).toContain('--paused needs the dashboard');
    const seed = await runCliInProcess(['demo', '--no-dashboard', '--seed', 'abc']);
    expect(seed.code).toBe(2);
    expect(seed.stderr).toContain('--seed must be a whole number');
  });

  it('says where there is no terminal for --dashboard', async () => {
    const result = await runCliToEnd(['demo', '--dashboard']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the dashboard needs an interactive terminal');
    expect(result.stderr).toContain('--no-dashboard prints the story as lines');
  });
});
