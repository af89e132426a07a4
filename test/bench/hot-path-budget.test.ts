/**
 * The budget guard (bench/README.md, "The budget guard"): the work of a fixed number of unlocks,
 * counted in-process, against the budgets committed in bench/budgets.json. Counts, not times, so
 * the machine's speed does not move them: a change that adds a parse, a publish, a timer or a
 * promise to every unlock fails here until its budget is raised on purpose.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WORK_COUNT_NAMES, measureStationHeap, measureUnlockWork, type WorkCounts } from '../../bench/lib/work-meter.js';

interface Budget {
  max: number;
  was: string;
}
const budgets = JSON.parse(readFileSync(new URL('../../bench/budgets.json', import.meta.url), 'utf8')) as {
  unlock: Record<keyof WorkCounts, Budget>;
  station: { heapBytes: Budget };
};

const UNLOCKS = 200;
/** Work that happens once in a run rather than per unlock (a reconnect timer, a GC-timed tick) may add this much to a count's total. */
const ONE_OFF = 2;

function overBudget(name: string, perUnlock: number, budget: Budget): string {
  return `${name}: ${perUnlock} per unlock, over its budget of ${budget.max} (set when it was ${budget.was}). If the new work is meant, raise the budget in bench/budgets.json in a commit that says why.`;
}

describe('the hot path within its budgets', () => {
  it('every budget of bench/budgets.json is one the meter measures', () => {
    expect(Object.keys(budgets.unlock).sort()).toEqual([...WORK_COUNT_NAMES].sort());
  });

  it(`${UNLOCKS} unlocks, one at a time, do no more work than their budgets allow`, async () => {
    const measured = await measureUnlockWork({ unlocks: UNLOCKS, warmup: 100 });
    const over: string[] = [];
    for (const name of WORK_COUNT_NAMES) {
      const budget = budgets.unlock[name];
      const allowed = name === 'heapBytes' ? budget.max * UNLOCKS : budget.max * UNLOCKS + ONE_OFF;
      if (measured.totals[name] > allowed) over.push(overBudget(name, measured.perUnlock[name], budget));
    }
    expect(over, JSON.stringify(measured.perUnlock)).toEqual([]);
    // The meter counted something: a broken wrapper would pass every budget.
    expect(measured.perUnlock.mqttPublishes).toBeGreaterThanOrEqual(4);
    expect(measured.perUnlock.jsonParses).toBeGreaterThanOrEqual(1);
  });

  it('an idle station holds no more heap than its budget', async () => {
    const perStation = await measureStationHeap(1000);
    expect(perStation).toBeGreaterThan(1000);
    expect(perStation <= budgets.station.heapBytes.max ? [] : [overBudget('station heapBytes', Math.round(perStation), budgets.station.heapBytes)]).toEqual([]);
  });
});
