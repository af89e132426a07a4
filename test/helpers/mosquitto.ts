/**
 * Starts a real Mosquitto on a free port for a test, so the firmware is proven against a broker we
 * did not write. Where `mosquitto` is missing the suite says so loudly; under CI it is a failure.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from './free-port.js';

export const MOSQUITTO = process.env.MOSQUITTO_BIN ?? 'mosquitto';

export function mosquittoAvailable(): boolean {
  const found = spawnSync(MOSQUITTO, ['-h']).error === undefined;
  if (!found) {
    if (process.env.CI) throw new Error(`${MOSQUITTO} is not installed, and CI=true requires the Mosquitto tests to run`);
    console.warn(`\n*** ${MOSQUITTO} not found: the tests against a real Mosquitto are SKIPPED (apt-get install mosquitto) ***\n`);
  }
  return found;
}

export interface RunningMosquitto {
  url: string;
  port: number;
  /** Kills the broker (SIGKILL: it keeps nothing) and starts it again on the same port. */
  restart(): Promise<void>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export async function startMosquitto(options: { passwordFile?: string } = {}): Promise<RunningMosquitto> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'mosquitto-'));
  const config = join(dir, 'mosquitto.conf');
  const lines = [`listener ${port} 127.0.0.1`, 'set_tcp_nodelay true', 'persistence false', 'log_dest none'];
  if (options.passwordFile) lines.push('allow_anonymous false', `password_file ${options.passwordFile}`);
  else lines.push('allow_anonymous true');
  await writeFile(config, `${lines.join('\n')}\n`);
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn(MOSQUITTO, ['-c', config], { stdio: 'ignore' });
    await waitForPort(port);
  };
  const kill = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    restart: async () => {
      await kill();
      await start();
    },
    kill,
    stop: kill,
  };
}
