/**
 * Mosquitto configured as production would be, for the `tls` part: docs/mosquitto/station-sim.conf
 * and docs/mosquitto/acl as shipped, with only the ports (free ones, on 127.0.0.1) and the folder
 * changed, and the certificates of a folder made by `generateTestPki` (`station-sim certs`). The
 * folder and config are made by `prepareProductionBroker`, which test/helpers/production-mosquitto.ts
 * uses too (this module has no vitest imports); this one adds the broker's pid for /proc.
 *
 * `restart()` kills the broker (SIGKILL: every session is gone, as on a crash) and starts it again
 * on the same ports: the reconnect storm.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, chown, copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';
import { waitForPort } from './mosquitto.js';
import { readKernelMemory, type KernelMemory } from './proc.js';

const DOCS = fileURLToPath(new URL('../../docs/mosquitto/', import.meta.url));
/** Where the shipped config expects the files, and the ports it listens on. */
export const PRODUCTION_DIR = '/etc/mosquitto/station-sim';
export const PRODUCTION_PORTS = { certificate: 8883, password: 8884 } as const;
const BROKER_FILES = ['ca.crt', 'server.crt', 'server.key', 'crl.pem'] as const;

export interface BenchProductionMosquitto {
  /** mqtts:// URL of the certificate listener: a client certificate is required, its CN is user name and client id. */
  readonly certificateUrl: string;
  /** The broker's pid now (it changes with `restart`). */
  pid(): number;
  memory(): KernelMemory | undefined;
  /** SIGKILL, then a start on the same ports; resolves once both listeners accept connections. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The shipped config with the bench's ports and folder: the only differences from docs/mosquitto/station-sim.conf. */
export function benchProductionConfig(template: string, options: { dir: string; certificatePort: number; passwordPort: number }): string {
  const lines = template.split('\n');
  const listenerA = lines.indexOf(`listener ${PRODUCTION_PORTS.certificate}`);
  const listenerB = lines.indexOf(`listener ${PRODUCTION_PORTS.password}`);
  if (listenerA < 0 || listenerB < 0) throw new Error('docs/mosquitto/station-sim.conf has lost its listener lines');
  lines[listenerA] = `listener ${options.certificatePort} 127.0.0.1`;
  lines[listenerB] = `listener ${options.passwordPort} 127.0.0.1`;
  return lines.join('\n').replaceAll(PRODUCTION_DIR, options.dir);
}

export interface BenchProductionOptions {
  /** A folder made by `generateTestPki`. */
  certsDir: string;
  /**
   * Lines added at the end of the shipped config, e.g. `set_tcp_nodelay true` (a general option:
   * without it Mosquitto's replies wait for Nagle's algorithm). @default none
   */
  extraLines?: string[];
  /** @default "mosquitto" */
  binary?: string;
}

/** A broker folder ready to run: the config file, and how to copy the certificates in again (at a reload). */
export interface ProductionBrokerFolder {
  dir: string;
  configFile: string;
  /** The config as written. */
  config: string;
  certificatePort: number;
  passwordPort: number;
  copyBrokerFiles(): Promise<void>;
}

/**
 * Makes a folder for Mosquitto from a `station-sim certs` folder: the shipped config with free
 * ports and this folder put in (and `extraLines` after it), the shipped ACL, a password file of
 * `users` (made with `mosquitto_passwd -b`), and copies of ca.crt, server.crt, server.key and
 * crl.pem, owned by the `mosquitto` user when run as root (Mosquitto drops to it).
 */
export async function prepareProductionBroker(options: { certsDir: string; users?: Record<string, string>; extraLines?: string[] }): Promise<ProductionBrokerFolder> {
  const [certificatePort, passwordPort] = [await freePort(), await freePort()];
  const dir = await mkdtemp(path.join(tmpdir(), 'station-sim-mosquitto-production-'));
  await chmod(dir, 0o755);
  const owner = userInfo().uid === 0 ? mosquittoUser() : undefined;
  const own = async (file: string): Promise<void> => {
    if (owner) await chown(file, owner.uid, owner.gid);
  };
  const passwordFile = path.join(dir, 'passwd');
  await writeFile(passwordFile, '', { mode: 0o600 });
  for (const [name, password] of Object.entries(options.users ?? {})) {
    const made = spawnSync('mosquitto_passwd', ['-b', passwordFile, name, password]);
    if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr.toString()}`);
  }
  await own(passwordFile);
  await copyFile(path.join(DOCS, 'acl'), path.join(dir, 'acl'));
  await own(path.join(dir, 'acl'));
  const copyBrokerFiles = async (): Promise<void> => {
    for (const name of BROKER_FILES) {
      await copyFile(path.join(options.certsDir, name), path.join(dir, name));
      await own(path.join(dir, name));
    }
  };
  await copyBrokerFiles();
  const configFile = path.join(dir, 'mosquitto.conf');
  const shipped = benchProductionConfig(await readFile(path.join(DOCS, 'station-sim.conf'), 'utf8'), { dir, certificatePort, passwordPort });
  // General options go anywhere in mosquitto.conf; these follow the listeners.
  const config = options.extraLines?.length ? [shipped.trimEnd(), ...options.extraLines, ''].join('\n') : shipped;
  await writeFile(configFile, config, { mode: 0o644 });
  return { dir, configFile, config, certificatePort, passwordPort, copyBrokerFiles };
}

export async function startBenchProductionMosquitto(options: BenchProductionOptions): Promise<BenchProductionMosquitto> {
  const { dir, configFile, certificatePort, passwordPort, copyBrokerFiles } = await prepareProductionBroker({
    certsDir: options.certsDir,
    ...(options.extraLines ? { extraLines: options.extraLines } : {}),
  });

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stderr = '';
  const start = async (): Promise<void> => {
    const started = spawn(options.binary ?? 'mosquitto', ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = started;
    stderr = '';
    started.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-2000);
    });
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    try {
      await waitForPort(certificatePort, 10_000, exited);
      await waitForPort(passwordPort, 10_000, exited);
    } catch (error) {
      started.kill('SIGKILL');
      throw new Error(`mosquitto (production config) did not start: ${(error as Error).message} ${stderr.trim()}`);
    }
  };
  const kill = async (): Promise<void> => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await exited;
  };
  try {
    await start();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    certificateUrl: `mqtts://127.0.0.1:${certificatePort}`,
    pid: () => child?.pid ?? -1,
    memory: () => readKernelMemory(child?.pid ?? -1),
    restart: async () => {
      await kill();
      await copyBrokerFiles();
      await start();
    },
    stop: async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child?.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(killer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function mosquittoUser(): { uid: number; gid: number } | undefined {
  const uid = spawnSync('id', ['-u', 'mosquitto']);
  const gid = spawnSync('id', ['-g', 'mosquitto']);
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.toString().trim()), gid: Number(gid.stdout.toString().trim()) };
}
