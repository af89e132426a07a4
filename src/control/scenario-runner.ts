/**
 * Replays a fixture's scenario timeline through the control channel, so a CI run or a demo tells
 * the same story every time: each step at its `at` (from the start) or `after` the previous one,
 * on the injected clock.
 */
import type { ScenarioStep } from '../fixture/fixture-schema.js';
import { durationMs } from '../fixture/load-fixture.js';
import type { Clock, TimerHandle } from '../station/clock.js';
import type { ControlAction, ControlChannel } from './control-channel.js';
import type { EventHub } from './event-hub.js';

export interface ScenarioRunnerOptions {
  steps: ScenarioStep[];
  channel: ControlChannel;
  hub: EventHub;
  clock: Clock;
  /** Called when a step fails (the station did not answer, say); the timeline goes on. */
  onError?: (step: ScenarioStep, error: Error) => void;
}

export interface StartedScenario {
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
      return { action: 'reboot', downMs: step.downMs ?? 2000 };
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
  const timers: TimerHandle[] = [];
  let previous = 0;
  options.steps.forEach((step, index) => {
    // The fixture loader has checked every step, so the assertions of `stepAction` hold.
    const due = step.at !== undefined ? durationMs(step.at) : previous + durationMs(step.after ?? 0);
    previous = due;
    timers.push(
      options.clock.setTimeout(() => {
        const action = stepAction(step);
        const label = `scenario step ${index + 1}: ${step.do}${step.lockId ? ` lock ${step.lockId}` : ''}`;
        const run = action === undefined ? options.channel.fleet('reset') : options.channel.control(step.station!, action);
        run.then(
          () => options.hub.emit({ type: 'control', ...(step.station ? { token: step.station } : {}), action: label }),
          (error: Error) => options.onError?.(step, error),
        );
      }, due),
    );
  });
  return {
    stop: () => {
      for (const timer of timers) options.clock.clearTimeout(timer);
    },
  };
}
