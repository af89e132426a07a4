/**
 * bench/lib/history.ts: the rows and bands `bench/history.ts` prints from stored results.
 */
import { describe, expect, it } from 'vitest';
import { historyRows, renderHistory, speedBands } from '../../bench/lib/history.js';
import type { BenchResult } from '../../bench/lib/report.js';

type Run = { unlockRps: number; unlockP99: number; helloCpuUs: number; unlockCpuUs: number };

function result(commit: string, rampSeconds: number | undefined, rows: { broker: string; connections: number; runs: Run[] }[], mosquitto?: Run[]): Partial<BenchResult> {
  return {
    header: { commit, options: rampSeconds === undefined ? {} : { rampSeconds } } as unknown as BenchResult['header'],
    unlock: { rows } as unknown as BenchResult['unlock'],
    ...(mosquitto ? { mosquitto: { boot: [], unlock: { rows: [{ broker: 'mosquitto', connections: 100, runs: mosquitto }] } } as unknown as BenchResult['mosquitto'] } : {}),
  };
}

describe('bench history', () => {
  it('keeps every run at the asked connection count, of both brokers, with the machine speed and Little’s-law mean', () => {
    const stored = result(
      'abcdef0123',
      1,
      [
        { broker: 'embedded', connections: 1, runs: [{ unlockRps: 2000, unlockP99: 1, helloCpuUs: 40, unlockCpuUs: 500 }] },
        { broker: 'embedded', connections: 100, runs: [{ unlockRps: 5000, unlockP99: 35, helloCpuUs: 50, unlockCpuUs: 250 }] },
      ],
      [{ unlockRps: 4000, unlockP99: 28, helloCpuUs: 32, unlockCpuUs: 224 }],
    );
    const rows = historyRows('a.json', stored, 100);
    expect(rows).toEqual([
      { file: 'a.json', commit: 'abcdef0', broker: 'embedded', rampSeconds: 1, unlockRps: 5000, unlockP99: 35, littleMeanMs: 20, helloCpuUs: 50, unlockCpuUs: 250, costInHellos: 5 },
      { file: 'a.json', commit: 'abcdef0', broker: 'mosquitto', rampSeconds: 1, unlockRps: 4000, unlockP99: 28, littleMeanMs: 25, helloCpuUs: 32, unlockCpuUs: 224, costInHellos: 7 },
    ]);
  });

  it('leaves out runs without CPU figures (older files) and treats a missing ramp as none', () => {
    const stored = result('1234567', undefined, [
      { broker: 'embedded', connections: 100, runs: [{ unlockRps: 3000, unlockP99: 50, helloCpuUs: Number.NaN, unlockCpuUs: 300 }, { unlockRps: 3000, unlockP99: 50, helloCpuUs: 60, unlockCpuUs: 300 }] },
    ]);
    const rows = historyRows('old.json', stored, 100);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ rampSeconds: 0, costInHellos: 5 });
  });

  it('groups runs by the machine’s speed and counts those within the target', () => {
    const rows = historyRows(
      'b.json',
      result('x', 1, [
        {
          broker: 'embedded',
          connections: 100,
          runs: [
            { unlockRps: 7000, unlockP99: 29, helloCpuUs: 33, unlockCpuUs: 180 },
            { unlockRps: 6400, unlockP99: 37, helloCpuUs: 36, unlockCpuUs: 190 },
            { unlockRps: 4000, unlockP99: 40, helloCpuUs: 60, unlockCpuUs: 310 },
          ],
        },
      ]),
      100,
    );
    expect(speedBands(rows, [40, 50], 30)).toEqual([
      { broker: 'embedded', from: 0, to: 40, runs: 2, met: 1, medianUnlockRps: 6700, medianP99: 33 },
      { broker: 'embedded', from: 50, to: Number.POSITIVE_INFINITY, runs: 1, met: 0, medianUnlockRps: 4000, medianP99: 40 },
    ]);
    const text = renderHistory(rows, { connections: 100, edges: [40, 50], p99TargetMs: 30 });
    expect(text).toContain('3 runs at 100 connections');
    expect(text).toContain('| embedded | 0–40 µs | 2 | 1 of 2 | 6,700 | 33.0 ms |');
    expect(text).toContain('| embedded | 50 µs and more | 1 | 0 of 1 | 4,000 | 40.0 ms |');
    // Fastest machine first within a broker.
    expect(text.indexOf('| 7,000 |')).toBeLessThan(text.indexOf('| 4,000 |'));
  });

  it('says so when nothing was stored at that connection count', () => {
    expect(renderHistory([], { connections: 10, edges: [40], p99TargetMs: 30 })).toContain('No stored run has figures at 10 connections.');
  });
});
