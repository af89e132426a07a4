/**
 * The real Mosquitto, configured as production would be (docs/mqtt-security.md, "Mosquitto
 * configured as production"), from a folder made by `station-sim certs`. The config and the ACL
 * are docs/mosquitto/station-sim.conf and docs/mosquitto/acl as shipped, with only the ports
 * (free ones, on 127.0.0.1) and the folder changed, so what the tests prove is what the docs say.
 *
 * The broker reads copies of ca.crt, server.crt, server.key and crl.pem made at each start and
 * reload, owned by the `mosquitto` user when the tests run as root (Mosquitto drops to it).
 */
import { spawnSync } from 'node:child_process';
import { chmod, chown, copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitForPort } from './free-port.js';
import { MOSQUITTO } from './mosquitto.js';
import { supervisedServer } from './supervised-server.js';

export { mosquittoAvailable } from './mosquitto.js';

const DOCS = fileURLToPath(new URL('../../docs/mosquitto/', import.meta.url));
/** Where the shipped config expects the files, and the ports it listens on. */
export const PRODUCTION_DIR = '/etc/mosquitto/station-sim';
export const PRODUCTION_PORTS = { certificate: 8883, password: 8884 } as const;
const BROKER_FILES = ['ca.crt', 'server.crt', 'server.key', 'crl.pem'] as const;

export interface ProductionMosquitto {
  /** mqtts:// URL of listener A: a client certificate is required, its CN is the user name. */
  certificateUrl: string;
  /** mqtts:// URL of listener B: user name and password, server certificate only. */
  passwordUrl: string;
  /** The config Mosquitto runs with. */
  config: string;
  /** Copies the CRL (and the other broker files) again and sends SIGHUP: Mosquitto 2.0 reloads its CRL then. */
  reload(): Promise<void>;
  /** Stops the broker (SIGKILL) and starts it again on the same ports with fresh copies of the files. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The shipped config with the test's ports and folder: the only differences from docs/mosquitto/station-sim.conf. */
export function productionConfig(template: string, options: { dir: string; certificatePort: number; passwordPort: number }): string {
  const lines = template.split('\n');
  const listenerA = lines.indexOf(`listener ${PRODUCTION_PORTS.certificate}`);
  const listenerB = lines.indexOf(`listener ${PRODUCTION_PORTS.password}`);
  if (listenerA < 0 || listenerB < 0) throw new Error('docs/mosquitto/station-sim.conf has lost its listener lines');
  lines[listenerA] = `listener ${options.certificatePort} 127.0.0.1`;
  lines[listenerB] = `listener ${options.passwordPort} 127.0.0.1`;
  return lines.join('\n').replaceAll(PRODUCTION_DIR, options.dir);
}

/**
 * Starts Mosquitto from `certsDir` (made by `station-sim certs`). `users` are the name/password
 * pairs of the password listener, written with `mosquitto_passwd -b`.
 */
export async function startProductionMosquitto(options: { certsDir: string; users?: Record<string, string> }): Promise<ProductionMosquitto> {
  const [certificatePort, passwordPort] = [await freePort(), await freePort()];
  const dir = await mkdtemp(join(tmpdir(), 'mosquitto-production-'));
  await chmod(dir, 0o755);
  const owner = userInfo().uid === 0 ? mosquittoUser() : undefined;
  const own = async (path: string): Promise<void> => {
    if (owner) await chown(path, owner.uid, owner.gid);
  };

  const passwordFile = join(dir, 'passwd');
  await writeFile(passwordFile, '', { mode: 0o600 });
  for (const [name, password] of Object.entries(options.users ?? {})) {
    const made = spawnSync('mosquitto_passwd', ['-b', passwordFile, name, password]);
    if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr.toString()}`);
  }
  await own(passwordFile);
  await copyFile(join(DOCS, 'acl'), join(dir, 'acl'));
  await own(join(dir, 'acl'));
  const copyBrokerFiles = async (): Promise<void> => {
    for (const name of BROKER_FILES) {
      await copyFile(join(options.certsDir, name), join(dir, name));
      await own(join(dir, name));
    }
  };
  await copyBrokerFiles();

  const config = productionConfig(await readFile(join(DOCS, 'station-sim.conf'), 'utf8'), { dir, certificatePort, passwordPort });
  const configFile = join(dir, 'mosquitto.conf');
  await writeFile(configFile, config);
  const server = supervisedServer(MOSQUITTO, ['-c', configFile], async () => {
    await waitForPort(certificatePort);
    await waitForPort(passwordPort);
  });
  await server.start();
  return {
    certificateUrl: `mqtts://127.0.0.1:${certificatePort}`,
    passwordUrl: `mqtts://127.0.0.1:${passwordPort}`,
    config,
    reload: async () => {
      await copyBrokerFiles();
      if (!server.signal('SIGHUP')) throw new Error('Mosquitto is not running');
    },
    restart: async () => {
      await server.kill();
      await copyBrokerFiles();
      await server.start();
    },
    stop: async () => {
      await server.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function mosquittoUser(): { uid: number; gid: number } | undefined {
  const found = spawnSync('id', ['-u', 'mosquitto']);
  const group = spawnSync('id', ['-g', 'mosquitto']);
  if (found.status !== 0 || group.status !== 0) return undefined;
  return { uid: Number(found.stdout.toString().trim()), gid: Number(group.stdout.toString().trim()) };
}
