/**
 * `station-sim demo`: the lock story told step by step (src/demo/demo-story.ts) on the shipped demo
 * fixture, in the dashboard with a caption per step (`space` pauses, `n` goes to the next step), or
 * as lines on stdout where there is no terminal (`--no-dashboard`, CI). The simulator runs on a
 * manual clock that the story moves itself, so `--seed N` replays the same story: the same lines,
 * and with `--record` the same transcript (docs/demo.md).
 */
import type { CommandModule } from 'yargs';
import type { CliIo, CommandResult } from '../../output.js';
import { DEMO_OPTIONS, type DemoFlags } from './options.js';

export function demoCommand(io: CliIo, result: CommandResult): CommandModule<object, DemoFlags> {
  return {
    command: 'demo',
    describe: 'Tell the lock story step by step on the demo fixture: unlock, jam, low battery, timeout, offline, recovery',
    builder: (yargs) =>
      yargs
        .options(DEMO_OPTIONS)
        .epilog(
          'Keys in the dashboard: space pauses and resumes (simulated time stops too), n plays the rest of the step at once and goes to the next, q quits. The same --seed tells the same story: the same lines, the same unlock delays.',
        ),
    handler: async (argv: DemoFlags) => {
      const { runDemo } = await import('./handler.js');
      await runDemo(io, result, argv);
    },
  };
}
