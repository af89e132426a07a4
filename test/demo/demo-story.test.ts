/**
 * The narrated demo's story played to its end against a real simulator (the shipped demo fixture,
 * a manual clock), checked through the simulator's own records rather than the runner's verdicts:
 * the request journal has each unlock with the answer the step is about, and the station ends as it
 * began. Then: one seed replays one story, whatever keys are pressed on the way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ControlClient } from '../../src/client/control-client.js';
import { createClient } from '../../src/client/station-sim-client.js';
import { formatDemoEvent, startDemo, type DemoEvent, type StartedDemo } from '../../src/demo/demo-runner.js';
import { checkStory, DEMO_STORY, MAX_CAPTION_LENGTH } from '../../src/demo/demo-story.js';
import { ManualClock, systemClock, type Clock } from '../../src/shared/clock.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('the demo story unlocks an offline station on purpose, to show the refusal');

const START = Date.parse('2026-01-01T09:00:00.000Z');
const running: { sim: StartedSimulator; control: ControlClient }[] = [];

afterEach(async () => {
  for (const { sim, control } of running.splice(0)) {
    control.close();
    await sim.stop();
  }
});

async function simulator(seed: number) {
  const sim = await startSimulator({ fixture: 'demo', seed, clock: new ManualClock(START), commandTimeoutMs: DEMO_STORY.commandTimeoutMs });
  const control = new ControlClient({ url: sim.apiUrl! });
  running.push({ sim, control });
  return { sim, control };
}

/** Plays the story on a fresh simulator and returns its lines; `steer` may press keys on the way. */
async function play(seed: number, options: { realClock?: Clock; fast?: boolean; steer?: (event: DemoEvent, demo: StartedDemo) => void } = {}) {
  const { sim, control } = await simulator(seed);
  const lines: string[] = [];
  const events: DemoEvent[] = [];
  let demo: StartedDemo | undefined;
  demo = startDemo({
    story: DEMO_STORY,
    control,
    apiUrl: sim.apiUrl!,
    accounts: sim.fixture.accounts,
    fast: options.fast ?? true,
    ...(options.realClock ? { realClock: options.realClock } : {}),
    onEvent: (event) => {
      events.push(event);
      lines.push(formatDemoEvent(event));
      if (demo) options.steer?.(event, demo);
    },
  });
  const end = await demo.finished;
  return { sim, control, lines, events, end };
}

describe('the demo story', () => {
  it('fits the shipped demo fixture, and each caption fits 80 columns', async () => {
    const { sim } = await simulator(1);
    expect(checkStory(DEMO_STORY, sim.fixture)).toEqual([]);
    for (const step of DEMO_STORY.steps) expect(step.caption.length).toBeLessThanOrEqual(MAX_CAPTION_LENGTH);
    // And says what a fixture lacks, in words.
    const lacking = { accounts: [{ email: 'alice@example.com', stations: ['ST-1002'] }], stations: [{ token: 'ST-1001', locks: [{ lockId: '1' }] }] };
    expect(checkStory(DEMO_STORY, lacking)).toEqual(['account "alice@example.com" cannot reach station "ST-1001"', 'station "ST-1001" has no lock "2"']);
  }, 60_000);

  it('runs to its end with each answer the story is about, and leaves the station as it found it', async () => {
    const { sim, control, events, end } = await play(42);
    expect(end).toMatchObject({ kind: 'end', steps: DEMO_STORY.steps.length, failures: 0 });
    expect(events.filter((event) => event.kind === 'outcome' && !event.ok)).toEqual([]);

    // What the API answered, as the simulator's journal has it, one unlock per step that makes one.
    const journal = await control.journal({ kind: 'api' });
    const unlocks = journal.entries.filter((entry) => entry.kind === 'api' && entry.route.endsWith('/unlock'));
    expect(unlocks.map((entry) => entry.kind === 'api' && [entry.lockId, entry.status, entry.outcome])).toEqual([
      ['1', 200, 'accepted'],
      ['1', 504, 'UNLOCK_OUTCOME_UNKNOWN'],
      ['2', 200, 'LOCK_JAMMED'],
      ['1', 200, 'BATTERY_LOW'],
      ['1', 504, 'UNLOCK_OUTCOME_UNKNOWN'],
      ['1', 200, 'STATION_OFFLINE'],
      ['2', 200, 'accepted'],
    ]);
    // The command over NB-IoT was acked after the API gave up; the dropped one reached the station
    // (and was never acked); the offline one was never sent.
    const commands = (await control.journal({ kind: 'command', token: 'ST-1001' })).entries;
    expect(commands.map((entry) => entry.kind === 'command' && [entry.lockId, entry.outcome])).toEqual([
      ['1', 'acked'],
      ['1', 'acked'],
      ['2', 'rejected'],
      ['1', 'rejected'],
      ['1', 'timeout'],
      ['2', 'acked'],
    ]);

    // Recovered: online, no fault, both locks locked, the battery back where it started.
    const station = await control.station('ST-1001');
    expect(station.status).toBe('online');
    expect(station.faults).toEqual([]);
    expect(station.locks.slice(0, 2).map((lock) => lock.status)).toEqual(['locked', 'locked']);
    const alice = sim.fixture.accounts.find((account) => account.email === 'alice@example.com')!;
    const seen = await createClient({ baseUrl: sim.apiUrl!, email: alice.email, password: alice.password, clock: sim.clock }).getStation('ST-1001');
    expect(seen.status).toBe('online');
    // Charged back to its starting voltage, less what the last unlock took.
    const config = sim.fixture.stations.find((candidate) => candidate.token === 'ST-1001')!;
    expect(seen.batteryVoltage).toBeCloseTo(config.batteryVoltage - config.behaviour.battery.drainPerUnlockV, 5);
  }, 90_000);

  it('replays the same lines with the same seed, whatever keys were pressed, and other delays with another seed', async () => {
    // Paced (on a real clock that runs 250 times fast, to keep the test short), with space and n
    // pressed on the way: the keys change when things happen in real time, never in simulated time.
    const quick: Clock = { now: () => systemClock.now(), setTimeout: (callback) => systemClock.setTimeout(callback, 1), clearTimeout: systemClock.clearTimeout };
    let paused = false;
    // Four simulators at once: each story waits out two of the API's 2 s command timeouts in real
    // time, and one seed's story must not depend on what else runs beside it.
    const [first, second, steered, other] = await Promise.all([
      play(7),
      play(7),
      play(7, {
        fast: false,
        realClock: quick,
        steer: (event, demo) => {
          if (event.kind !== 'step') return;
          if (event.index === 2) demo.pacer.next();
          if (event.index === 3) {
            demo.pacer.togglePause();
            paused = true;
            // n while paused plays the next step and holds again; space then lets it go on.
            setTimeout(() => demo.pacer.next(), 20);
          }
          if (event.index === 4 && paused) {
            expect(demo.pacer.paused).toBe(true);
            setTimeout(() => demo.pacer.togglePause(), 20);
          }
        },
      }),
      play(8),
    ]);
    expect(second.lines).toEqual(first.lines);
    expect(first.end?.failures).toBe(0);
    expect(paused).toBe(true);
    expect(steered.lines).toEqual(first.lines);

    expect(other.lines).toHaveLength(first.lines.length);
    expect(other.lines.filter((line) => /unlock delay/.test(line))).not.toEqual(first.lines.filter((line) => /unlock delay/.test(line)));
  }, 120_000);
});
