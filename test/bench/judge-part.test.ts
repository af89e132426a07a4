/**
 * The pure pieces of the bench's `judge` part (bench/judge.ts): the medians and ratios of its
 * rounds, the targets line, and that the harness's own commands break no rule of the judge.
 */
import { describe, expect, it } from 'vitest';
import { JUDGE_CPU_TARGET, measureObserve, summarise, type JudgeResult, type JudgeRound } from '../../bench/judge.js';
import { renderJudge } from '../../bench/lib/report.js';

const measurement = (cpuUs: number, rps = 300) => ({ cpuUs, rps, errors: 0, otherCpu: 0.1 });
const round = (on: number, off: number, first: 'on' | 'off'): JudgeRound => ({ on: measurement(on), off: measurement(off), first });

function result(rounds: JudgeRound[]): JudgeResult {
  const r: JudgeResult = {
    aaControl: false, connections: 10, rate: 300, durationSeconds: 5, stations: 1000, locks: 4, rounds,
    onCpuUs: Number.NaN, offCpuUs: Number.NaN, onRps: Number.NaN, offRps: Number.NaN, ratio: Number.NaN, pooledRatio: Number.NaN,
    findings: 0, observeUs: 5, observeShare: Number.NaN, failures: [],
  };
  summarise(r);
  return r;
}

describe('the judge part', () => {
  it('compares the medians of the rounds, judge on against off', () => {
    const r = result([round(1100, 1000, 'on'), round(1050, 1000, 'off'), round(3000, 900, 'on')]);
    expect(r.onCpuUs).toBe(1100);
    expect(r.offCpuUs).toBe(1000);
    expect(r.ratio).toBe(1.1);
    expect(r.observeShare).toBe(0.005);
    expect(renderJudge(r)).toContain(`≤ ${JUDGE_CPU_TARGET.toFixed(2)}× off: 1.10× (met;`);
    expect(renderJudge(result([round(1200, 1000, 'on')]))).toContain('1.20× (NOT met;');
  });

  it("says when nothing was measured, and lists the part's failures", () => {
    const r = result([]);
    r.failures.push('judge: the simulator did not start');
    expect(renderJudge(r)).toContain('(not measured;');
    expect(renderJudge(r)).toContain('- judge: the simulator did not start');
  });

  it("times the judge alone on the bench's own commands, which break no rule", () => {
    // measureObserve throws when the judge finds anything in the commands it builds.
    expect(measureObserve(100, 4, 300, 2000)).toBeGreaterThan(0);
  });
});
