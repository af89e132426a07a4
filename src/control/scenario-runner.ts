/**
 * Replays a fixture's scenario timeline through the control channel, so a CI run or a demo tells
 * the same story every time: each step at its `at` (from the start) or `after` the previous one,
 * on the injected clock.
 *
 * Steps run one at a time, in the order of their times (list order for equal times): a step is
 * sent once the one before it has been answered, or has failed, even if its own time has come
 * meanwhile. Sent as soon as due, a step could reach its station before an earlier, slower one (a
 * reset of a large fleet) and be undone by it.
 */
import type { ScenarioStep } from '../fixture/fixture-schema.js';
import { scenarioDueTimes } from '../fixture/load-fixture.js';
import { DEFAULT_REBOOT_DOWN_MS } from '../contract/station-actions.js';
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { ControlAction, ControlChannel } from './control-channel.js';
import type { EventHub } from './event-hub.js';
import type { FleetReadiness } from './fleet-readiness.js';

export interface ScenarioRunnerOptions {
  /** Steps as the fixture loader checked them (every rule of `checkScenario` holds). */
  steps: ScenarioStep[];
  channel: Pick<ControlChannel, 'control' | 'fleet'>;
  hub: Pick<EventHub, 'emit'>;
  /** Told of each step the fleet answered, for health's targets. @default not told */
  readiness?: Pick<FleetReadiness, 'controlled'>;
  clock: Clock;
  /** Called when a step fails (the station did not answer, say); the timeline goes on. */
  onError?: (step: ScenarioStep, error: Error) => void;
}

export interface StartedScenario {
  /**
   * Resolves once no step is waiting for its answer: every step due by now has been answered (or
   * has failed). Steps run one at a time, so a manual clock's `advance` that passes several steps
   * has them all in effect only after this.
   */
  settled(): Promise<void>;
  /** No further step is sent; a step already sent is not reported. */
  stop(): void;
}

/** The control action a step stands for; undefined for a fleet-wide reset. */
export function stepAction(step: ScenarioStep): ControlAction | undefined {
  switch (step.do) {
    case 'offline':
    case 'online':
      return { action: 'connection', online: step.do === 'online' };
    case 'battery':
      return { action: 'battery', voltage: step.voltage! };
    case 'reboot':
      return { action: 'reboot', downMs: step.downMs ?? DEFAULT_REBOOT_DOWN_MS };
    case 'jam':
    case 'unjam':
    case 'forceOpen':
    case 'forceClose':
      return { action: 'physical', lockId: step.lockId!, physical: step.do };
    case 'fault':
      return { action: 'addFault', fault: step.fault! };
    case 'clearFaults':
      return { action: 'clearFaults' };
    case 'reset':
      return undefined;
  }
}

export function startScenario(options: ScenarioRunnerOptions): StartedScenario {
  const { clock } = options;
  const origin = clock.now();
  const dues = scenarioDueTimes(options.steps);
  // Array.prototype.sort is stable: steps due together keep their list order.
  const timeline = options.steps.map((step, index) => ({ step, index, due: dues[index]! })).sort((a, b) => a.due - b.due);
  let next = 0;
  let timer: TimerHandle | undefined;
  let stopped = false;
  /** The step sent and not yet answered, with what follows its answer. */
  let inFlight: Promise<void> | undefined;

  const runNext = (): void => {
    timer = undefined;
    const entry = timeline[next];
    if (stopped || !entry) return;
    const wait = origin + entry.due - clock.now();
    if (wait > 0) {
      timer = clock.setTimeout(runNext, wait);
      return;
    }
    next += 1;
    const { step, index } = entry;
    // The fixture loader has checked every step, so the assertions of `stepAction` hold.
    const action = stepAction(step);
    const lockId = step.lockId ?? step.fault?.lockId;
    const label = `scenario step ${index + 1}: ${step.do}${lockId ? ` lock ${lockId}` : ''}`;
    const run: Promise<unknown> = action === undefined ? options.channel.fleet('reset') : options.channel.control(step.station!, action);
    const flight: Promise<void> = run
      .then(
        () => {
          options.readiness?.controlled(step.station, action ?? { action: 'reset' });
          if (!stopped) options.hub.emit({ type: 'control', ...(step.station ? { token: step.station } : {}), action: label });
        },
        (error: Error) => {
          if (!stopped) options.onError?.(step, error);
        },
      )
      .finally(() => {
        if (inFlight === flight) inFlight = undefined;
        runNext();
      });
    inFlight = flight;
  };

  // The first step goes through the clock even when due at once: a manual clock sends it on the
  // first advance, not while the simulator is starting.
  if (timeline.length > 0) timer = clock.setTimeout(runNext, timeline[0]!.due);
  return {
    settled: async () => {
      // Each answer sends the next step if it is due, which is then the one in flight.
      while (inFlight) await inFlight.catch(() => undefined);
    },
    stop: () => {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
