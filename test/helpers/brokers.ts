/**
 * The brokers of the broker matrix (test/brokers/), each started by the test on free loopback
 * ports with a plain listener and a TLS listener (the server's certificate from `makeTestPki`,
 * no client certificate asked for): the embedded broker (aedes, in this process), Mosquitto, a
 * NATS server's MQTT listener (its own config file, JetStream store and `server_name`) and a
 * RabbitMQ node of its own with the `rabbitmq_mqtt` plugin (its own node name, data folder and
 * Erlang cookie, so the machine's shared RabbitMQ is left as it is).
 *
 * A missing server fails loudly under CI and skips with one loud line elsewhere (required-tool.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { freePort, waitForPort } from './free-port.js';
import { MOSQUITTO, mosquittoAvailable } from './mosquitto.js';
import { supervisedServer } from './supervised-server.js';
import { toolAvailable } from './required-tool.js';
import type { TestPki } from './tls-mosquitto.js';

export const BROKER_NAMES = ['embedded', 'mosquitto', 'nats', 'rabbitmq'] as const;
export type BrokerName = (typeof BROKER_NAMES)[number];

export interface MatrixBroker {
  name: BrokerName;
  /** mqtt://127.0.0.1:port */
  url: string;
  /** mqtts://127.0.0.1:port, its certificate signed by the PKI's CA, for 127.0.0.1. */
  tlsUrl: string;
  /**
   * Kills the plain listener's broker (SIGKILL, or a stop for the embedded one) and starts it again
   * on the same port and files; undefined where a restart costs more than the suite can spend.
   */
  restart?: () => Promise<void>;
  /** Kills the broker and removes its files. */
  stop(): Promise<void>;
}

export const NATS_SERVER = process.env.NATS_SERVER_BIN ?? 'nats-server';
/** The node's start script itself, not the service wrapper (which would switch to the `rabbitmq` user). */
export const RABBITMQ_SERVER = process.env.RABBITMQ_SERVER_BIN ?? '/usr/lib/rabbitmq/bin/rabbitmq-server';
/** Where the Debian package puts `rabbitmq_server-<version>/plugins/rabbitmq_mqtt-<version>`. */
const RABBITMQ_MQTT_PLUGIN_GLOB_DIR = '/usr/lib/rabbitmq/lib';

export function natsAvailable(): boolean {
  return toolAvailable({ command: NATS_SERVER, probe: ['--version'], what: 'the broker matrix against NATS', aptPackage: 'nats-server' });
}

export function rabbitMqAvailable(): boolean {
  // Never run to probe it: with any argument the script starts a node (named `rabbit`, the
  // machine's own node name), and fails with a crash dump in the working folder if that one runs.
  return toolAvailable({
    command: RABBITMQ_SERVER,
    probe: [],
    what: 'the broker matrix against RabbitMQ',
    aptPackage: 'rabbitmq-server',
    present: () => existsSync(RABBITMQ_SERVER) && existsSync(RABBITMQ_MQTT_PLUGIN_GLOB_DIR) && readdirSync(RABBITMQ_MQTT_PLUGIN_GLOB_DIR).some((dir) => dir.startsWith('rabbitmq_server-') && existsSync(join(RABBITMQ_MQTT_PLUGIN_GLOB_DIR, dir, 'plugins')) && readdirSync(join(RABBITMQ_MQTT_PLUGIN_GLOB_DIR, dir, 'plugins')).some((plugin) => plugin.startsWith('rabbitmq_mqtt-'))),
  });
}

/** Whether the tools the named broker needs are here (false, with a loud line, off CI; a throw under CI). */
export function brokerAvailable(name: BrokerName): boolean {
  if (name === 'mosquitto') return mosquittoAvailable();
  if (name === 'nats') return natsAvailable();
  if (name === 'rabbitmq') return rabbitMqAvailable();
  return true;
}

export async function startMatrixBroker(name: BrokerName, pki: TestPki): Promise<MatrixBroker> {
  switch (name) {
    case 'embedded':
      return startEmbedded(pki);
    case 'mosquitto':
      return startMosquittoPair(pki);
    case 'nats':
      return startNatsPair(pki);
    case 'rabbitmq':
      return startRabbitMq(pki);
  }
}

async function startEmbedded(pki: TestPki): Promise<MatrixBroker> {
  // `station-sim broker` runs this; here in the test's process. The PKI folder holds ca.crt,
  // server.crt and server.key, as a `station-sim certs` folder would.
  let broker = await startEmbeddedBroker({ port: 0, certs: pki.dir, tlsPort: 0 });
  const { url, port } = broker;
  const tlsUrl = broker.tlsUrl!;
  return {
    name: 'embedded',
    url,
    tlsUrl,
    restart: async () => {
      await broker.stop();
      broker = await startEmbeddedBroker({ port, certs: pki.dir, tlsPort: Number(new URL(tlsUrl).port) });
    },
    stop: () => broker.stop(),
  };
}

async function startMosquittoPair(pki: TestPki): Promise<MatrixBroker> {
  const [port, tlsPort] = [await freePort(), await freePort()];
  const dir = await mkdtemp(join(tmpdir(), 'mosquitto-matrix-'));
  await chmod(dir, 0o755);
  const config = join(dir, 'mosquitto.conf');
  const lines = [
    'allow_anonymous true',
    'persistence false',
    'log_dest stderr',
    'log_type error',
    'set_tcp_nodelay true',
    `listener ${port} 127.0.0.1`,
    `listener ${tlsPort} 127.0.0.1`,
    `cafile ${pki.ca}`,
    `certfile ${pki.server.cert}`,
    `keyfile ${pki.server.key}`,
  ];
  await writeFile(config, `${lines.join('\n')}\n`);
  const server = supervisedServer(MOSQUITTO, ['-c', config], async () => {
    await waitForPort(port);
    await waitForPort(tlsPort);
  });
  await server.start();
  return {
    name: 'mosquitto',
    url: `mqtt://127.0.0.1:${port}`,
    tlsUrl: `mqtts://127.0.0.1:${tlsPort}`,
    restart: async () => {
      await server.kill();
      await server.start();
    },
    stop: async () => {
      await server.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface NatsNodeOptions {
  /** `server_name`: JetStream refuses to start an MQTT listener without one. */
  serverName: string;
  /** Folder for the config file and the JetStream store. */
  dir: string;
  /** Address of the MQTT listener. @default 127.0.0.1 */
  mqttHost?: string;
  mqttPort: number;
  /** The MQTT listener speaks TLS only (NATS has one MQTT listener per server). */
  tls?: { cert: string; key: string };
  /** `mqtt.ack_wait`: how long NATS waits for a PUBACK before it sends a QoS 1 message again. @default NATS's, 30 s */
  ackWait?: string;
  /** `cluster { name, listen, routes }` for a clustered node: its route listener and the others', as host:port. */
  cluster?: { name: string; listen: string; routes: string[] };
  /** `http`: the monitoring listener (`/healthz`, `/jsz`), as host:port. */
  monitor?: string;
}

/** The config file of one nats-server with JetStream and an MQTT listener. */
export function natsConfig(options: NatsNodeOptions): string {
  const lines = [
    `server_name: ${options.serverName}`,
    'listen: 127.0.0.1:-1',
    `jetstream { store_dir: "${join(options.dir, 'jetstream')}" }`,
    'mqtt {',
    `  listen: "${options.mqttHost ?? '127.0.0.1'}:${options.mqttPort}"`,
    ...(options.ackWait ? [`  ack_wait: "${options.ackWait}"`] : []),
    ...(options.tls ? [`  tls { cert_file: "${options.tls.cert}", key_file: "${options.tls.key}" }`] : []),
    '}',
  ];
  if (options.cluster) {
    const { name, listen, routes } = options.cluster;
    lines.push('cluster {', `  name: ${name}`, `  listen: ${listen}`, `  routes: [${routes.map((route) => `"nats-route://${route}"`).join(', ')}]`, '}');
  }
  if (options.monitor) lines.push(`http: ${options.monitor}`);
  return `${lines.join('\n')}\n`;
}

export interface RunningNatsNode {
  kill(): Promise<void>;
  start(): Promise<void>;
  /** The node's last log lines (NATS logs on stderr). */
  output(): string;
}

export async function startNatsNode(options: NatsNodeOptions & { ready?: () => Promise<void> }): Promise<RunningNatsNode> {
  await mkdir(options.dir, { recursive: true });
  const config = join(options.dir, `${options.serverName}.conf`);
  await writeFile(config, natsConfig(options));
  const ready = options.ready ?? (() => waitForPort(options.mqttPort, 30_000));
  const server = supervisedServer(NATS_SERVER, ['-c', config], ready);
  await server.start();
  return { kill: server.kill, start: server.start, output: server.output };
}

async function startNatsPair(pki: TestPki): Promise<MatrixBroker> {
  const dir = await mkdtemp(join(tmpdir(), 'nats-matrix-'));
  const [port, tlsPort] = [await freePort(), await freePort()];
  // ack_wait: NATS sends an unacknowledged QoS 1 message again after it (30 s unless told), not
  // when the session comes back; 2 s lets the suite see it (docs/brokers.md).
  const plain = await startNatsNode({ serverName: 'matrix-plain', dir: join(dir, 'plain'), mqttPort: port, ackWait: '2s' });
  const secured = await startNatsNode({ serverName: 'matrix-tls', dir: join(dir, 'tls'), mqttPort: tlsPort, tls: pki.server });
  return {
    name: 'nats',
    url: `mqtt://127.0.0.1:${port}`,
    tlsUrl: `mqtts://127.0.0.1:${tlsPort}`,
    restart: async () => {
      await plain.kill();
      await plain.start();
    },
    stop: async () => {
      await plain.kill();
      await secured.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A RabbitMQ node of the test's own. Its name, ports, data folder, enabled plugins and Erlang
 * cookie (HOME) are its own; it registers with the machine's epmd like any node. It is started
 * as a process group, so that killing it takes the Erlang VM down with the start script.
 */
async function startRabbitMq(pki: TestPki): Promise<MatrixBroker> {
  const dir = await mkdtemp(join(tmpdir(), 'rabbitmq-matrix-'));
  const [amqpPort, distPort, port, tlsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const config = join(dir, 'rabbitmq.conf');
  await writeFile(
    config,
    [
      `listeners.tcp.default = 127.0.0.1:${amqpPort}`,
      `mqtt.listeners.tcp.default = 127.0.0.1:${port}`,
      `mqtt.listeners.ssl.default = 127.0.0.1:${tlsPort}`,
      `ssl_options.cacertfile = ${pki.ca}`,
      `ssl_options.certfile = ${pki.server.cert}`,
      `ssl_options.keyfile = ${pki.server.key}`,
      'ssl_options.verify = verify_none',
      'ssl_options.fail_if_no_peer_cert = false',
      'distribution.listener.interface = 127.0.0.1',
      '',
    ].join('\n'),
  );
  const plugins = join(dir, 'enabled_plugins');
  await writeFile(plugins, '[rabbitmq_mqtt].\n');
  const node = `matrix${process.pid}x${Math.floor(Math.random() * 1e6)}@localhost`;
  const env = {
    ...process.env,
    HOME: dir,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(amqpPort),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: config,
    RABBITMQ_ENABLED_PLUGINS_FILE: plugins,
    RABBITMQ_PID_FILE: join(dir, 'pid'),
    RABBITMQ_LOGS: '-',
  };
  if (!existsSync(join(dir, 'log'))) await mkdir(join(dir, 'log'));
  const child = spawn(RABBITMQ_SERVER, [], { env, cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: string): void => {
    output = (output + chunk).slice(-4000);
  };
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`rabbitmq-server exited with ${code}: ${output.trim()}`))));
  exited.catch(() => undefined);
  const stop = async (): Promise<void> => {
    await killGroup(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    // A node boots in 5 to 30 s on a loaded machine; its MQTT listeners open last.
    await Promise.race([(async () => {
      await waitForPort(port, 90_000);
      await waitForPort(tlsPort, 10_000);
    })(), exited]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { name: 'rabbitmq', url: `mqtt://127.0.0.1:${port}`, tlsUrl: `mqtts://127.0.0.1:${tlsPort}`, stop };
}

/** SIGKILL to a process group started with `detached: true`, and waits for its leader to exit. */
export async function killGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
  await exited;
}
