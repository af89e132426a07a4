/** What `demo` does: the simulator on a manual clock, and the story played on it in the dashboard or as lines. */
import { ControlClient } from '../../../client/control-client.js';
import { NOT_A_TTY_MESSAGE } from '../../../dashboard/not-a-tty.js';
import { formatDemoEvent, startDemo, type DemoEvent, type StartedDemo } from '../../../demo/demo-runner.js';
import { checkStory, DEMO_STORY } from '../../../demo/demo-story.js';
import { SimError } from '../../../errors.js';
import { ManualClock } from '../../../shared/clock.js';
import { startSimulator } from '../../../simulator/start-simulator.js';
import { checked, seedOf } from '../../option-checks.js';
import { notice, UsageError, type CliIo, type CommandResult } from '../../output.js';
import { STOP_SIGNALS, stopCause } from '../../run-until-signal.js';
import type { DemoFlags } from './options.js';

/**
 * Where the demo's simulated time starts: a fixed instant, not the time of the run, so that two
 * runs with one seed give the same transcript byte for byte (docs/fixtures.md, "Reproducible runs").
 */
export const DEMO_CLOCK_START = '2026-01-01T09:00:00.000Z';

export async function runDemo(io: CliIo, result: CommandResult, argv: DemoFlags): Promise<void> {
  const seed = seedOf(argv);
  const httpPort = checked('http-port', 'httpPort', argv['http-port']);
  const mqttPort = checked('mqtt-port', 'mqttPort', argv['mqtt-port']);
  const wanted = argv.dashboard;
  if (wanted === true && !process.stdout.isTTY) throw new SimError('BAD_REQUEST', `${NOT_A_TTY_MESSAGE}; --no-dashboard prints the story as lines`);
  // Ink draws only its last frame when CI is set, so the default leaves the dashboard out there.
  const withDashboard = wanted ?? (process.stdout.isTTY === true && !process.env.CI);
  if (argv.paused && !withDashboard) throw new UsageError('--paused needs the dashboard: its keys (space, n) are how the story goes on');

  const sim = await startSimulator({
    fixture: 'demo',
    ...(seed === undefined ? {} : { seed }),
    clock: new ManualClock(Date.parse(DEMO_CLOCK_START)),
    commandTimeoutMs: DEMO_STORY.commandTimeoutMs,
    httpPort,
    mqttPort,
    ...(argv.record === undefined ? {} : { record: argv.record }),
    onNotice: (message) => notice(io, message),
  });
  const problems = checkStory(DEMO_STORY, sim.fixture);
  if (problems.length > 0) {
    await sim.stop();
    throw new SimError('BAD_REQUEST', `the demo fixture no longer holds the story: ${problems.join('; ')}`);
  }
  notice(io, `demo: API ${sim.apiUrl} · control ${sim.controlUrl} · MQTT ${sim.mqttUrl} · seed ${sim.seed}`);
  const control = new ControlClient({ url: sim.apiUrl });
  const play = (onEvent: (event: DemoEvent) => void): StartedDemo =>
    startDemo({
      story: DEMO_STORY,
      control,
      simulatorClock: sim.clock,
      apiUrl: sim.apiUrl,
      accounts: sim.fixture.accounts,
      onEvent,
      fast: argv.fast,
      paused: argv.paused,
    });
  const stopAll = async (demo: StartedDemo): Promise<void> => {
    demo.stop();
    control.close();
    await sim.stop();
  };
  if (!withDashboard) {
    result.code = await playAsLines(io, play, stopAll);
    return;
  }
  // Ink and React are loaded only to be shown: `--no-dashboard` and CI print the story as lines.
  const { playInDashboard } = await import('./play-in-dashboard.js');
  await playInDashboard(io, sim, { play, stopAll, exitAtEnd: argv['exit-at-end'] });
}

/** The story as lines on stdout; the exit code is 1 when an outcome was not as expected. */
async function playAsLines(io: CliIo, play: (onEvent: (event: DemoEvent) => void) => StartedDemo, stopAll: (demo: StartedDemo) => Promise<void>): Promise<number> {
  const demo = play((event) => io.stdout.write(`${formatDemoEvent(event)}\n`));
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      notice(io, `${signal} again, exiting without a clean shutdown`);
      process.exit(1);
    }
    signalled = signal;
    notice(io, `${stopCause(signal)}, shutting down`);
    demo.stop();
  };
  for (const name of STOP_SIGNALS) process.on(name, onSignal);
  try {
    const end = await demo.finished;
    if (signalled || !end) return 0;
    if (end.failures > 0) notice(io, `demo: ${end.failures} outcome${end.failures === 1 ? ' was' : 's were'} not as the story expects`);
    return end.failures > 0 ? 1 : 0;
  } finally {
    for (const name of STOP_SIGNALS) process.off(name, onSignal);
    await stopAll(demo);
  }
}
