/**
 * `demo` in the dashboard, in a module of its own: Ink and React are loaded only when the story is
 * shown in the dashboard, not for `--no-dashboard` and CI, which print it as lines.
 */
import { startDashboard } from '../../../dashboard/index.js';
import { DemoCaption } from '../../../demo/demo-caption.js';
import type { DemoEvent, StartedDemo } from '../../../demo/demo-runner.js';
import type { StartedSimulator } from '../../../simulator/start-simulator.js';
import type { CliIo } from '../../output.js';
import { runDashboardUntilDone, unlockAs } from '../dashboard/handler.js';

/** The story under the dashboard, until `q`, a signal, or (with --exit-at-end) its end. */
export async function playInDashboard(
  io: CliIo,
  sim: StartedSimulator,
  {
    play,
    stopAll,
    exitAtEnd,
  }: {
    play: (onEvent: (event: DemoEvent) => void) => StartedDemo;
    stopAll: (demo: StartedDemo) => Promise<void>;
    exitAtEnd: boolean;
  },
): Promise<void> {
  let caption: DemoCaption | undefined;
  const demo = play((event) => caption?.onEvent(event));
  caption = new DemoCaption(demo.pacer);
  const account = sim.fixture.accounts[0]!;
  const dashboard = startDashboard({
    url: sim.apiUrl!,
    // `u` unlocks as the story's account does, as `up --dashboard` does.
    unlock: unlockAs(sim.apiUrl!, account.email, account.password),
    simulatedClock: sim.clock,
    caption,
  });
  demo.finished.then(
    (end) => {
      if (!end) return;
      if (exitAtEnd) void dashboard.stop();
      // The dashboard stays: its keys (u, o, x…) act on a simulator whose clock runs on.
      else void demo.pacer.runFree().catch((error: Error) => caption.fail(error.message));
    },
    (error: Error) => caption.fail(error.message),
  );
  await runDashboardUntilDone(io, dashboard, () => stopAll(demo));
}
