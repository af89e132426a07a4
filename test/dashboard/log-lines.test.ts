/** The log's entries as screen lines: long unlock chains wrap at their steps and keep their outcome. */
import { describe, expect, it } from 'vitest';
import type { LogEntry, UnlockChain } from '../../src/dashboard/activity-log.js';
import { fitSegments, logLines } from '../../src/dashboard/log-lines.js';
import { cellWidth } from '../../src/dashboard/format.js';

const T0 = Date.parse('2026-11-22T08:00:00.000Z');

function chain(id: number, steps: [string, number?][], result?: UnlockChain['result']): UnlockChain {
  return {
    kind: 'unlock',
    id,
    at: T0,
    token: 'ST-1001',
    lockId: String(id),
    stage: 'locked',
    steps: [{ label: 'requested', at: T0 }, ...steps.map(([label, deltaMs]) => ({ label, at: T0, ...(deltaMs === undefined ? {} : { deltaMs }) }))],
    ...(result ? { result } : {}),
  };
}

const ordinary = chain(3, [['acked', 2], ['unlocked', 2261], ['locked', 5000]], { success: true });
const timedOut = chain(4, [['timed out', 5001]], { success: false, message: 'Station did not acknowledge the command in time' });
const text = (entries: LogEntry[], width: number, height: number, showClock = false): string[] =>
  logLines(entries, { width, height, showClock }).map((line) => line.clock + line.text);

describe('logLines', () => {
  it('fits an ordinary chain on one 80-column line, outcome included', () => {
    expect(text([ordinary], 80, 5)).toEqual(['ST-1001/3 unlock → acked +2ms → unlocked +2261ms → locked +5000ms · ok']);
  });

  it('wraps a chain too wide for the line at its steps, so the failure is read whole', () => {
    const lines = text([ordinary, timedOut], 80, 5);
    expect(lines).toEqual([
      'ST-1001/3 unlock → acked +2ms → unlocked +2261ms → locked +5000ms · ok',
      'ST-1001/4 unlock → timed out +5001ms',
      '  · failed: Station did not acknowledge the command in time',
    ]);
    // With the clock in front (a wide terminal), continuation lines line up under the text.
    expect(text([timedOut], 60, 5, true)).toEqual([
      '08:00:00 ST-1001/4 unlock → timed out +5001ms',
      // An outcome wider than the line wraps at its words rather than losing its end to `…`.
      '           · failed: Station did not acknowledge the command',
      '           in time',
    ]);
    for (const line of text([ordinary, timedOut], 40, 12)) expect(cellWidth(line)).toBeLessThanOrEqual(40);
  });

  it('drops middle steps before the outcome when the log is short, and fills from the newest', () => {
    expect(fitSegments(['ST-1001/3 unlock', '→ acked +2ms', '→ unlocked +2261ms', '→ locked +5000ms', '· ok'], 40, 1)).toEqual([
      'ST-1001/3 unlock … → locked +5000ms · ok',
    ]);
    // One line of log: the newest entry, squeezed into it; older ones give way.
    expect(text([timedOut, ordinary], 40, 1)).toEqual(['ST-1001/3 unlock … → locked +5000ms · ok']);
  });

  it('wraps a long line at its words, and cuts it with … where the log ends', () => {
    const line: LogEntry = { kind: 'line', id: 9, at: T0, tone: 'error', text: 'events refused: control token needed: pass --control-token or set STATION_SIM_CONTROL_TOKEN' };
    expect(text([line], 40, 5)).toEqual(['events refused: control token needed:', '  pass --control-token or set', '  STATION_SIM_CONTROL_TOKEN']);
    expect(text([line], 40, 2)).toEqual(['events refused: control token needed:', '  pass --control-token or set…']);
  });

  it('keeps the outcome of a failed unlock that never got past requested when the log has one line for it', () => {
    const failed: UnlockChain = { ...chain(5, []), stage: 'failed', result: { success: false, message: 'no account: start the dashboard with --email and STATION_SIM_PASSWORD' } };
    // Head and outcome are all it has: squeezed to one line, the outcome follows the head.
    expect(text([failed], 80, 1)).toEqual(['ST-1001/5 unlock requested · failed: no account: start the dashboard with --ema…']);
    // Two lines: the outcome on its own line, cut only where it needs a third.
    expect(text([failed], 80, 2)).toEqual(['ST-1001/5 unlock requested', '  · failed: no account: start the dashboard with --email and…']);
    // Room enough: an outcome wider than the line wraps at its words.
    expect(text([failed], 50, 5)).toEqual([
      'ST-1001/5 unlock requested',
      '  · failed: no account: start the dashboard with',
      '  --email and STATION_SIM_PASSWORD',
    ]);
  });
});
