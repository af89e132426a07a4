/** Runs the real `station-sim` CLI in a child process, as a user would. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { eventually } from './eventually.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * The compiled CLI, as the package's `bin` runs it: test/helpers/build-once.ts (vitest's global
 * setup) builds it when `src/` is newer, so a start costs no TypeScript compilation.
 */
export const CLI_MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/**
 * CLI processes still running. A test that times out never reaches its own cleanup, and its CLI
 * would outlive the run (holding ports and a core); whatever is left when the file ends is killed.
 */
const running = new Set<ChildProcessWithoutNullStreams>();
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

export class CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;

  /**
   * `wrapper` runs the CLI through another command, e.g. `['ip', 'netns', 'exec', 'host-1']` to
   * run it inside a network namespace; signals then reach the wrapper, which passes them on
   * (`ip netns exec` execs the command, so it is the CLI's own process).
   */
  constructor(args: string[], env: NodeJS.ProcessEnv = {}, options: { wrapper?: string[] } = {}) {
    const [command, ...prefix] = [...(options.wrapper ?? []), process.execPath];
    this.child = spawn(command!, [...prefix, CLI_MAIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env, FORCE_COLOR: '0' },
    });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    running.add(this.child);
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code) => {
        running.delete(this.child);
        resolve(code);
      }),
    );
  }

  /** The first stdout line, parsed as JSON (the `--json` ready line); fails at once if the CLI exits first. */
  async readyJson(timeoutMs = 20_000): Promise<Record<string, any>> {
    const hasLine = (): boolean => this.stdout.includes('\n');
    await eventually(
      () => {
        if (!hasLine()) throw new Error(`no line on stdout yet; stderr: ${this.stderr}`);
      },
      {
        what: 'the ready line',
        timeout: timeoutMs,
        interval: 25,
        failIf: () => (this.child.exitCode === null || hasLine() ? undefined : `the CLI exited with ${this.child.exitCode}: ${this.stderr}`),
      },
    );
    return JSON.parse(this.stdout.split('\n')[0]!) as Record<string, any>;
  }

  async signal(signal: NodeJS.Signals): Promise<number | null> {
    this.child.kill(signal);
    return this.exited;
  }
}

/** Runs the CLI to completion. */
export async function runCliToEnd(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = new CliProcess(args, env);
  const code = await cli.exited;
  return { code, stdout: cli.stdout, stderr: cli.stderr };
}


/**
 * The CLI in this process, its stdout and stderr caught in strings: no child process to start (a
 * start-up takes seconds on a loaded machine). Imported when first used, so files that only spawn
 * the CLI do not load it.
 */
export async function runCliInProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { runCli } = await import('../../src/cli/run-cli.js');
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const code = await runCli(args, { stdout: sink((text) => (stdout += text)), stderr: sink((text) => (stderr += text)) });
  return { code, stdout, stderr };
}
