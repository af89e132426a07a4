/**
 * Starts a real Mosquitto on a free port for a test, so the firmware is proven against a broker we
 * did not write. Where `mosquitto` is missing the suite says so loudly; under CI it is a failure.
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from './free-port.js';
import { supervisedServer } from './supervised-server.js';
import { toolAvailable } from './required-tool.js';

export const MOSQUITTO = process.env.MOSQUITTO_BIN ?? 'mosquitto';

export function mosquittoAvailable(): boolean {
  return toolAvailable({ command: MOSQUITTO, probe: ['-h'], what: 'the tests against a real Mosquitto', aptPackage: 'mosquitto' });
}

export interface RunningMosquitto {
  url: string;
  port: number;
  /** Kills the broker (SIGKILL: it keeps nothing) and starts it again on the same port. */
  restart(): Promise<void>;
  kill(): Promise<void>;
  stop(): Promise<void>;
  /** Sends a signal to the broker (SIGSTOP: it keeps its connections and answers nothing; SIGCONT). */
  signal(name: NodeJS.Signals): boolean;
}

/**
 * `users` turns anonymous access off and lets only these name/password pairs in. `acl` is the
 * lines of an ACL file (Mosquitto's `acl_file`: `user`, `topic`, `pattern` with `%u`/`%c`); a
 * client may then do only what they allow, and an MQTT 5 client hears why (PUBACK 0x87).
 */
export async function startMosquitto(options: { users?: Record<string, string>; acl?: string[] } = {}): Promise<RunningMosquitto> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'mosquitto-'));
  // Mosquitto started as root drops to the `mosquitto` user, which must be able to read these files.
  await chmod(dir, 0o755);
  const config = join(dir, 'mosquitto.conf');
  const lines = [`listener ${port} 127.0.0.1`, 'set_tcp_nodelay true', 'persistence false', 'log_dest stderr', 'log_type error'];
  if (options.users) {
    const passwordFile = join(dir, 'passwd');
    await writeFile(passwordFile, '');
    for (const [name, password] of Object.entries(options.users)) {
      const made = spawnSync('mosquitto_passwd', ['-b', passwordFile, name, password]);
      if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr}`);
    }
    await chmod(passwordFile, 0o644); // mosquitto_passwd writes it 0600; Mosquitto reads it as its own user
    lines.push('allow_anonymous false', `password_file ${passwordFile}`);
  }
  else lines.push('allow_anonymous true');
  if (options.acl) {
    const aclFile = join(dir, 'acl');
    await writeFile(aclFile, `${options.acl.join('\n')}\n`);
    await chmod(aclFile, 0o644);
    lines.push(`acl_file ${aclFile}`);
  }
  await writeFile(config, `${lines.join('\n')}\n`);
  const { start, kill, signal } = supervisedServer(MOSQUITTO, ['-c', config], () => waitForPort(port));
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
    signal,
  };
}
