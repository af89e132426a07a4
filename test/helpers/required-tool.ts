/**
 * The servers and tools some tests need (Mosquitto, Redis, tmux). Where one is missing, a run on
 * a developer's machine says so in one loud line and skips those tests; a CI run (`CI` set, as
 * every CI service sets it, and `.ci/run` does) fails instead, so a CI image that lost a package
 * cannot turn tests into silent skips.
 */
import { spawnSync } from 'node:child_process';

/** True when `CI` is set to anything but empty, `0` or `false`. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

export interface RequiredTool {
  /** The program, e.g. `mosquitto`. */
  command: string;
  /** Arguments that make it print its version and exit. */
  probe: string[];
  /** The tests that need it, for the messages: `the Mosquitto tests`. */
  what: string;
  /** The Debian package that has it. */
  aptPackage: string;
  /**
   * Checks that it is there without running it, for a program that does something when run with
   * any argument (RabbitMQ's start script starts a node). @default runs `command` with `probe`
   */
  present?: () => boolean;
}

/**
 * Whether `tool` can be run. Missing under CI, it throws (the test file fails where it asks);
 * missing elsewhere, it warns and answers false (the caller skips).
 */
export function toolAvailable(tool: RequiredTool, env: NodeJS.ProcessEnv = process.env, warn: (line: string) => void = console.warn): boolean {
  const found = tool.present ? tool.present() : spawnSync(tool.command, tool.probe, { stdio: 'ignore' }).error === undefined;
  if (!found) {
    if (inCi(env)) throw new Error(`${tool.command} is not installed, and CI=${env.CI} requires ${tool.what} to run (apt-get install ${tool.aptPackage})`);
    warn(`\n*** ${tool.command} not found: SKIPPED ${tool.what} (apt-get install ${tool.aptPackage}); under CI this fails the run ***\n`);
  }
  return found;
}
