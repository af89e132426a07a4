/**
 * Who each MQTT party is on the broker (docs/mqtt-security.md, "Identities"): from the fixture's
 * `mqtt` section, the folder the fixture is in and the command line, the client id, user name,
 * password and client certificate of every station, of the `/v1` gateway (service) and of the
 * control plane and fleet agent (control), and how all of them check the broker (TLS).
 *
 * The templates, client ids and password sources resolve as the embedded broker resolves them
 * (src/fixture/mqtt-identities.ts). Secrets are never shown: an error names the environment
 * variable or the file, never what it holds. A station's certificate and key are read when its
 * connection opens, not held between connections: 10,000 stations with 10,000 certificates hold
 * only their paths.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { SimError } from '../errors.js';
import { DEFAULT_IDENTITIES, type MqttIdentity, type MqttRole, type MqttSettings, type SecretSource } from '../fixture/mqtt-schema.js';
import { fixtureFolder, identityTemplates, readSecret, sharedClientId, stationClientId, withToken } from '../fixture/mqtt-identities.js';
import type { BrokerTls, ClientCertificate, ClientCertSource } from './transport.js';

/** What the command line says about TLS; it wins over the fixture. */
export interface TlsOverrides {
  /** `--broker-ca`: CA bundle (PEM file). */
  ca?: string;
  /** `--broker-cert`: client certificate (PEM file) of the service and control identities. */
  cert?: string;
  /** `--broker-key`: its private key (PEM file). */
  key?: string;
  /** `--broker-servername`: host name the broker certificate must carry. */
  servername?: string;
  /** `--insecure`: do not verify the broker certificate. */
  insecure?: boolean;
}

/** One party's connect settings, secrets read. */
export interface ConnectIdentity {
  clientId: string;
  username?: string;
  password?: string;
  /** For `mqtts://` and `wss://` only; a station's is read as each connection opens. */
  clientCert?: ClientCertSource;
}

/** The identity of a service or control client: its certificate is read at once (mqtt.js wants it so). */
export interface SharedIdentity extends ConnectIdentity {
  clientCert?: ClientCertificate;
}

export interface IdentitiesOptions {
  settings: MqttSettings;
  /** The fixture file (`Fixture.source`): the fixture's relative paths start from its folder. */
  fixtureSource: string;
  overrides?: TlsOverrides;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /**
   * Read the passwords. Off for connections into the embedded broker in this process, which
   * authenticates them by construction (docs/mqtt-security.md): a password not set in the
   * environment must not stop a simulator that never sends it.
   * @default true
   */
  passwords?: boolean;
  /**
   * The broker is reached over TLS (`mqtts://`, `wss://`): only then are the CA and the client
   * certificates read.
   * @default false
   */
  secure?: boolean;
  /** Random hex for the client ids several processes share. @default crypto.randomBytes */
  randomHex?: (bytes: number) => string;
}

/** Every party's identity, for one process. */
export interface MqttIdentities {
  /** How every party checks the broker on `mqtts://` and `wss://`. */
  readonly tls: BrokerTls;
  /** A station's identity; its password, if any, is read now, its certificate when it connects. */
  station(token: string): Promise<ConnectIdentity>;
  /** The `/v1` gateway's. */
  service(): Promise<SharedIdentity>;
  /** The control plane's; with `part` "agent", the fleet agent's (an identity of its own, held to control's topics). */
  control(part?: 'agent'): Promise<SharedIdentity>;
}

/** Default templates of docs/mqtt-security.md, "Identities" (the observer has no client of its own here). */
const DEFAULTS = DEFAULT_IDENTITIES as Readonly<Record<'station' | 'service' | 'control' | 'agent', { clientId: string; username: string; certs: string }>>;

/**
 * Files read at once by the station identities, at most: a fleet of 10,000 reconnecting together
 * must not run out of file descriptors (EMFILE) reading its certificates.
 */
const MAX_READS = 64;

/**
 * The identities of a fixture's parties. With no `mqtt` section (and no TLS options) every party
 * connects as before: a client id of its own and whatever credentials the broker URL carries.
 * The CA and the service and control certificates are read here, once; a missing one fails now.
 */
/**
 * The TLS settings every client shares: the broker's CA (read now, and only for a secure broker),
 * the server name to check, and whether not to check.
 */
async function brokerTlsOf(options: IdentitiesOptions, fromFixture: (path: string) => string, certs: string | undefined): Promise<BrokerTls> {
  const { settings } = options;
  const overrides = options.overrides ?? {};
  const tlsSettings: BrokerTls = {};
  const caPath = overrides.ca ?? (settings.tls?.ca === undefined ? undefined : fromFixture(settings.tls.ca)) ?? (certs && resolve(certs, 'ca.crt'));
  if (options.secure === true && caPath !== undefined) tlsSettings.ca = await readPem(caPath, 'the broker CA');
  const servername = overrides.servername ?? settings.tls?.serverName;
  if (servername !== undefined) tlsSettings.servername = servername;
  if (overrides.insecure) tlsSettings.insecure = true;
  return tlsSettings;
}

export async function loadIdentities(options: IdentitiesOptions): Promise<MqttIdentities> {
  const { settings } = options;
  const overrides = options.overrides ?? {};
  const env = options.env ?? process.env;
  const randomHex = options.randomHex ?? ((bytes: number) => randomBytes(bytes).toString('hex'));
  const base = fixtureFolder(options.fixtureSource);
  const fromFixture = (path: string): string => resolve(base, path);
  const certs = settings.certs === undefined ? undefined : fromFixture(settings.certs);
  // The defaults of the table apply once the fixture says anything about identities.
  const managed = settings.identities !== undefined || certs !== undefined;
  const secure = options.secure === true;
  const reads = new Limit(MAX_READS);

  const tlsSettings = await brokerTlsOf(options, fromFixture, certs);

  const declared = (role: MqttRole): MqttIdentity => settings.identities?.[role] ?? {};
  const templates = identityTemplates(settings);

  const secret = async (role: MqttRole, source: SecretSource, token: string | undefined): Promise<string> => {
    const who = token === undefined ? `the ${role} identity` : `station ${token}`;
    const read = await readSecret(source, { token, baseDir: base, env, run: (task) => reads.run(task) });
    if (read.ok) return read.value;
    switch (read.missing) {
      case 'env':
        throw new SimError('MQTT_CREDENTIALS', `The MQTT password of ${who} is in the environment variable ${read.name}, which is not set`);
      case 'file':
        throw new SimError('MQTT_CREDENTIALS', `Cannot read the MQTT password of ${who}: ${read.path} (${read.code})`);
      case 'empty':
        throw new SimError('MQTT_CREDENTIALS', `The MQTT password file of ${who}, ${read.path}, is empty`);
    }
  };

  /** Paths of a role's certificate and key: the fixture's fields, else the `certs` folder's layout. */
  const certPaths = (role: 'station' | 'service' | 'control' | 'agent', token: string | undefined): { cert: string; key: string } | undefined => {
    const identity = declared(role);
    if (identity.cert !== undefined || identity.key !== undefined) {
      if (identity.cert === undefined || identity.key === undefined) {
        throw new SimError('MQTT_CREDENTIALS', `mqtt.identities.${role} gives a ${identity.cert === undefined ? 'key' : 'certificate'} without a ${identity.cert === undefined ? 'certificate' : 'key'}`);
      }
      return { cert: fromFixture(withToken(identity.cert, token)), key: fromFixture(withToken(identity.key, token)) };
    }
    if (certs === undefined) return undefined;
    const stem = resolve(certs, withToken(DEFAULTS[role].certs, token));
    return { cert: `${stem}.crt`, key: `${stem}.key` };
  };

  const common = async (role: 'station' | 'service' | 'control' | 'agent', token: string | undefined, clientId: string): Promise<SharedIdentity> => {
    const identity = declared(role);
    const result: SharedIdentity = { clientId };
    // The default user names apply only once the fixture says anything about identities.
    const username = identity.username ?? (managed ? templates[role].username : undefined);
    if (username !== undefined) result.username = withToken(username, token);
    if (identity.password !== undefined && options.passwords !== false) result.password = await secret(role, identity.password, token);
    return result;
  };

  /** The service's or control's certificate: the command line's, else the fixture's; read now, as mqtt.js wants it at once. */
  const sharedCert = async (role: 'service' | 'control' | 'agent'): Promise<ClientCertificate | undefined> => {
    if ((overrides.cert === undefined) !== (overrides.key === undefined)) {
      throw new SimError('MQTT_CREDENTIALS', `--broker-cert and --broker-key go together: ${overrides.cert === undefined ? '--broker-cert' : '--broker-key'} is missing`);
    }
    const paths = overrides.cert !== undefined ? { cert: overrides.cert, key: overrides.key! } : certPaths(role, undefined);
    if (!paths) return undefined;
    return { cert: await readPem(paths.cert, `the ${role} certificate`), key: await readPem(paths.key, `the ${role} key`) };
  };

  const shared = async (role: 'service' | 'control' | 'agent', suffix: string): Promise<SharedIdentity> => {
    const template = templates[role].clientId ?? DEFAULTS[role].clientId;
    const identity: SharedIdentity = await common(role, undefined, sharedClientId(template, suffix));
    const cert = secure ? await sharedCert(role) : undefined;
    if (cert) identity.clientCert = cert;
    return identity;
  };

  return {
    tls: tlsSettings,
    station: async (token) => {
      const identity: ConnectIdentity = await common('station', token, stationClientId(templates, token));
      const paths = secure ? certPaths('station', token) : undefined;
      if (paths) {
        identity.clientCert = () =>
          reads.run(async () => ({ cert: await readPem(paths.cert, `the certificate of station ${token}`), key: await readPem(paths.key, `the key of station ${token}`) }));
      }
      return identity;
    },
    service: () => shared('service', randomHex(4)),
    control: (part) => (part === 'agent' ? shared('agent', randomUUID()) : shared('control', randomHex(4))),
  };
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new SimError('MQTT_CREDENTIALS', `Cannot read ${what}: ${path} (${code})`);
  }
}

/** A PEM file, checked to be PEM: a DER file or a wrong path given for a key is said plainly, not left to OpenSSL. */
async function readPem(path: string, what: string): Promise<string> {
  const text = await readText(path, what);
  if (!text.includes('-----BEGIN ')) throw new SimError('MQTT_CREDENTIALS', `${capitalise(what)} (${path}) is not a PEM file`);
  return text;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** At most `limit` tasks at a time; the rest wait their turn, in order. */
class Limit {
  #running = 0;
  readonly #queue: (() => void)[] = [];

  constructor(readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    // A slot freed is handed straight to the next in the queue, so a newcomer cannot take it meanwhile.
    if (this.#running >= this.limit) await new Promise<void>((resolve) => this.#queue.push(resolve));
    else this.#running += 1;
    try {
      return await task();
    } finally {
      const next = this.#queue.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }
}
