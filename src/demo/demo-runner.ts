/**
 * Plays a story (demo-story.ts) against a running simulator whose clock is manual: a caption per
 * step, its actions one after another, then the caption held for a while of simulated time. The
 * pacer (demo-pacer.ts) moves that time and answers `space` and `n`. Everything goes through the
 * `/sim/v1` control client and the `/v1` reference client, so the simulator may run in this process
 * or another.
 */
import { createClient, type StationSimClient } from '../client/station-sim-client.js';
import type { ControlClient } from '../client/control-client.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { performAction, type ActionContext } from './demo-actions.js';
import { DemoPacer, DemoStopped } from './demo-pacer.js';
import type { DemoStory } from './demo-story.js';

/** What happens in a story, in order. `at` is simulated milliseconds since the story began. */
export type DemoEvent =
  | { kind: 'step'; index: number; total: number; caption: string; at: number }
  | { kind: 'outcome'; index: number; ok: boolean; text: string; brief: string; at: number }
  | { kind: 'end'; steps: number; failures: number; at: number };

export interface DemoRunnerOptions {
  story: DemoStory;
  /** The control client of the simulator; its clock must be manual (`clock: "manual"`). */
  control: Pick<ControlClient, 'simulatorClock' | 'advanceClock' | 'station' | 'physical' | 'setBattery' | 'setConnection' | 'setLink' | 'addFault' | 'clearFaults'>;
  /** Base URL of the `/v1` API. */
  apiUrl: string;
  /** The fixture's accounts, for the actions made as one of them. */
  accounts: readonly { email: string; password: string }[];
  /** Told of each event as it happens. */
  onEvent?: (event: DemoEvent) => void;
  /** No real waits between ticks (CI, tests). @default false */
  fast?: boolean;
  /** Start paused. @default false */
  paused?: boolean;
  /** Simulated time per tick. @default 250 */
  tickMs?: number;
  /** Real time, for the pace and for the `/v1` polls. @default systemClock */
  realClock?: Clock;
  /**
   * The simulator's manual clock when it runs in this process (`station-sim demo`): moved directly,
   * so the event stream (and the dashboard's log) does not get a "clock advanced" line per tick.
   * The same ticks either way. @default `POST /sim/v1/clock/advance` through `control`
   */
  simulatorClock?: { now(): number; advance(ms: number): Promise<void> };
}

export interface StartedDemo {
  readonly pacer: DemoPacer;
  /** Settles with the end event once the story has ended, or with undefined once it was stopped. */
  readonly finished: Promise<Extract<DemoEvent, { kind: 'end' }> | undefined>;
  /** Ends the story where it is (an action in flight still completes). */
  stop(): void;
}

/** Starts playing; a failed start (a clock that is not manual, say) rejects `finished`. */
export function startDemo(options: DemoRunnerOptions): StartedDemo {
  const realClock = options.realClock ?? systemClock;
  let simNow = Number.NaN;
  const { control } = options;
  const pacer = new DemoPacer({
    advance: async (ms) => {
      const local = options.simulatorClock;
      if (local) {
        await local.advance(ms);
        simNow = local.now();
      } else {
        simNow = Date.parse((await control.advanceClock(ms)).now);
      }
    },
    realClock,
    ...(options.fast === undefined ? {} : { fast: options.fast }),
    ...(options.paused === undefined ? {} : { paused: options.paused }),
    ...(options.tickMs === undefined ? {} : { tickMs: options.tickMs }),
  });
  const finished = play(options, pacer, realClock, {
    now: () => simNow,
    set: (value) => {
      simNow = value;
    },
  });
  return { pacer, finished, stop: () => pacer.stop() };
}

async function play(
  options: DemoRunnerOptions,
  pacer: DemoPacer,
  realClock: Clock,
  sim: { now(): number; set(value: number): void },
): Promise<Extract<DemoEvent, { kind: 'end' }> | undefined> {
  const { story, control } = options;
  const clock = await control.simulatorClock();
  if (!clock.manual) throw new Error('the demo moves the simulator\'s clock itself: start the simulator with clock "manual"');
  sim.set(Date.parse(clock.now));
  const origin = sim.now();
  const emit = (event: DemoEvent): void => options.onEvent?.(event);
  const clients = new Map<string, StationSimClient>();
  const api = (email: string): StationSimClient => {
    let client = clients.get(email);
    if (!client) {
      const account = options.accounts.find((candidate) => candidate.email === email);
      if (!account) throw new Error(`no account "${email}" in the fixture`);
      // Tokens are issued on the simulator's clock: the client must judge their expiry on it too.
      client = createClient({ baseUrl: options.apiUrl, email, password: account.password, clock: { now: () => sim.now() } });
      clients.set(email, client);
    }
    return client;
  };
  const startVoltages = new Map<string, number>();
  for (const token of new Set(story.steps.flatMap((step) => step.actions.map((action) => action.station)))) {
    startVoltages.set(token, (await control.station(token)).batteryVoltage);
  }
  const context: ActionContext = { control, api, pacer, simNow: () => sim.now(), realClock, startVoltages, unlockedAt: new Map() };
  let failures = 0;
  try {
    for (const [index, step] of story.steps.entries()) {
      pacer.beginStep(index);
      emit({ kind: 'step', index, total: story.steps.length, caption: step.caption, at: sim.now() - origin });
      for (const action of step.actions) {
        await pacer.gate();
        let outcome;
        try {
          outcome = await performAction(action, context);
        } catch (error) {
          if (error instanceof DemoStopped || pacer.stopped) throw new DemoStopped();
          const text = `${action.do} ${action.station} failed: ${(error as Error).message}`;
          outcome = { ok: false, text, brief: text };
        }
        if (!outcome.ok) failures += 1;
        emit({ kind: 'outcome', index, ...outcome, at: sim.now() - origin });
      }
      pacer.beginHold();
      await pacer.pass(step.holdMs);
    }
  } catch (error) {
    if (error instanceof DemoStopped) return undefined;
    throw error;
  }
  const end = { kind: 'end' as const, steps: story.steps.length, failures, at: sim.now() - origin };
  emit(end);
  return end;
}

/** One event as a line of text: what `station-sim demo --no-dashboard` prints. */
export function formatDemoEvent(event: DemoEvent): string {
  const at = `[${(event.at / 1000).toFixed(2).padStart(6)} s]`;
  switch (event.kind) {
    case 'step':
      return `${at} ${event.index + 1}/${event.total} ${event.caption}`;
    case 'outcome':
      return `${at}   ${event.ok ? 'ok  ' : 'FAIL'} ${event.text}`;
    case 'end':
      return `${at} the end: ${event.steps} steps, ${event.failures === 0 ? 'every outcome as expected' : `${event.failures} outcome${event.failures === 1 ? '' : 's'} not as expected`}`;
  }
}
