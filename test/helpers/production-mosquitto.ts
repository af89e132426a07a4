/**
 * The real Mosquitto, configured as production would be (docs/mqtt-security.md, "Mosquitto
 * configured as production"), from a folder made by `station-sim certs`. The config and the ACL
 * are docs/mosquitto/station-sim.conf and docs/mosquitto/acl as shipped, with only the ports
 * (free ones, on 127.0.0.1) and the folder changed, so what the tests prove is what the docs say.
 *
 * The broker reads copies of ca.crt, server.crt, server.key and crl.pem made at each start and
 * reload, owned by the `mosquitto` user when the tests run as root (Mosquitto drops to it).
 */
import { rm } from 'node:fs/promises';
import { waitForPort } from './free-port.js';
import { MOSQUITTO } from './mosquitto.js';
import { supervisedServer } from './supervised-server.js';
import { benchProductionConfig, prepareProductionBroker } from '../../bench/lib/production-mosquitto.js';

export { mosquittoAvailable } from './mosquitto.js';
export { PRODUCTION_DIR, PRODUCTION_PORTS } from '../../bench/lib/production-mosquitto.js';

/** The shipped config with the test's ports and folder: the only differences from docs/mosquitto/station-sim.conf. */
export const productionConfig = benchProductionConfig;

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

/**
 * Starts Mosquitto from `certsDir` (made by `station-sim certs`). `users` are the name/password
 * pairs of the password listener, written with `mosquitto_passwd -b`.
 */
export async function startProductionMosquitto(options: { certsDir: string; users?: Record<string, string> }): Promise<ProductionMosquitto> {
  const { dir, configFile, config, certificatePort, passwordPort, copyBrokerFiles } = await prepareProductionBroker(options);
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
