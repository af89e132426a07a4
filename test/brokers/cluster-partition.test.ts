/**
 * A fleet across hosts through a clustered broker (docs/scale-out.md, "On a broker cluster"): a
 * three-node NATS cluster (routes, JetStream, an MQTT listener on each node), three "hosts" made
 * here as network namespaces joined to the cluster's namespace by veth pairs, each running
 * `station-sim stations --shard k/3` against its own node, and `station-sim api` in a fourth
 * namespace against the third node. One host is then cut off (its veth taken down): its stations
 * go offline by the broker's keepalive rule (their last wills), unlocks meanwhile answer offline
 * or outcome unknown, nothing opens late, and the fleet comes back when the link does.
 *
 * It needs root (`ip netns`), iproute2 and nats-server; under CI a missing one fails the file.
 * The times to detect and to recover are printed (one JSON line), not asserted; see
 * bench/results/2026-11-28-cluster-partition.md.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/free-port.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import { inCi, toolAvailable } from '../helpers/required-tool.js';
import { natsAvailable, startNatsNode, type RunningNatsNode } from '../helpers/brokers.js';

const run = promisify(execFile);

function rootAvailable(): boolean {
  const root = process.getuid?.() === 0;
  if (!root) {
    if (inCi()) throw new Error('the cluster partition test makes network namespaces, and CI must run it as root');
    console.warn('\n*** not root: SKIPPED the cluster partition test (ip netns needs root); under CI this fails the run ***\n');
  }
  return root;
}

const available =
  toolAvailable({ command: 'ip', probe: ['-V'], what: 'the cluster partition test', aptPackage: 'iproute2' }) && natsAvailable() && rootAvailable();

const EMAIL = 'fleet@example.com';
const PASSWORD = 'fleet-password';
const CONTROL_TOKEN = `control-${randomUUID()}`;
const HOSTS = 3;
const STATIONS = 9;
/**
 * The stations' keepalive. 6 s in the suite: in a loaded CI run a shard's first connection heard
 * no PINGRESP within 2 s (most likely a NATS node busy making the session's JetStream consumer),
 * and a station gives up a first connection that does not answer. The figures in
 * docs/scale-out.md were measured at PARTITION_KEEPALIVE_SECONDS=2.
 */
const KEEPALIVE_SECONDS = Number(process.env.PARTITION_KEEPALIVE_SECONDS ?? 6);
if (!Number.isInteger(KEEPALIVE_SECONDS) || KEEPALIVE_SECONDS < 1 || KEEPALIVE_SECONDS > 60) {
  throw new Error(`PARTITION_KEEPALIVE_SECONDS must be 1 to 60, not ${process.env.PARTITION_KEEPALIVE_SECONDS}`);
}
const COMMAND_TTL_MS = 3000;
/**
 * How long the partition lasts after the broker noticed it. 0 in the suite; a longer one (e.g.
 * PARTITION_HOLD_MS=30000) shows the recovery with the stations' reconnect backoff grown.
 */
const HOLD_MS = Number(process.env.PARTITION_HOLD_MS ?? 0);
if (!Number.isInteger(HOLD_MS) || HOLD_MS < 0 || HOLD_MS > 120_000) throw new Error(`PARTITION_HOLD_MS must be 0 to 120000 ms, not ${process.env.PARTITION_HOLD_MS}`);

/** Station i (0-based) runs on host (i mod 3) + 1, as `--shard` splits the fixture. */
const tokenOf = (i: number): string => `P-${i + 1}`;
const hostOf = (i: number): number => (i % HOSTS) + 1;
const stationsOfHost = (host: number): string[] => Array.from({ length: STATIONS }, (_, i) => i).filter((i) => hostOf(i) === host).map(tokenOf);

function fixture(): object {
  const tokens = Array.from({ length: STATIONS }, (_, i) => tokenOf(i));
  return {
    description: 'A fleet over three hosts: 2 s keepalive, 3 s command TTL, fast locks.',
    seed: 3,
    defaults: {
      unlockDelayMs: { min: 20, max: 50 },
      relockMs: 200,
      heartbeatMs: 1000,
      keepaliveSeconds: KEEPALIVE_SECONDS,
      commandTtlMs: COMMAND_TTL_MS,
      battery: { drainPerUnlockV: 0, drainPerHourV: 0 },
    },
    api: { commandTimeoutMs: 1500, loginThrottle: { enabled: false } },
    accounts: [{ email: EMAIL, password: PASSWORD, stations: tokens }],
    stations: tokens.map((token, i) => ({ token, stationId: i + 1, locks: [{ lockId: '1' }, { lockId: '2' }] })),
  };
}

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

/** Resolves once something accepts TCP connections at host:port (an address of another interface). */
async function waitForTcp(host: string, port: number, timeout: number): Promise<void> {
  const accepts = (): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = net.connect({ host, port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  await eventually(accepts, { timeout, interval: 100, what: `something to listen on ${host}:${port}` });
}

describe.runIf(available)('a fleet over three hosts through a three-node NATS cluster, one host partitioned', () => {
  // Names and addresses of this run, so two runs on one machine do not meet.
  const tag = String(process.pid % 100_000);
  const octet = 200 + (process.pid % 50);
  const namespace = (host: number): string => `ssim${tag}h${host}`;
  const outside = (host: number): string => `ss${tag}r${host}`;
  const inside = (host: number): string => `ss${tag}h${host}`;
  /** The cluster's side of host k's link (node k listens here), and the host's side. */
  const nodeAddress = (host: number): string => `10.${octet}.${host}.1`;
  const hostAddress = (host: number): string => `10.${octet}.${host}.2`;
  const API_HOST = HOSTS + 1;

  const made: { namespaces: string[]; links: string[] } = { namespaces: [], links: [] };
  const nodes: RunningNatsNode[] = [];
  const processes: CliProcess[] = [];
  let dir: string;
  let mqttPort: number;
  let apiUrl: string;
  let observer: MqttObserver;
  let accessToken: string;

  const api = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${apiUrl}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${path.startsWith('/sim/') ? CONTROL_TOKEN : accessToken}` },
    });
    return { status: response.status, body: await response.json() };
  };
  const statusOf = async (token: string): Promise<string> => (await api(`/v1/stations/${token}`)).body.status;
  const onlineCount = async (): Promise<number> => (await api('/sim/v1/health')).body.stations?.online ?? 0;

  async function makeHost(host: number): Promise<void> {
    const ns = namespace(host);
    await ip('netns', 'add', ns);
    made.namespaces.push(ns);
    await ip('link', 'add', outside(host), 'type', 'veth', 'peer', 'name', inside(host));
    made.links.push(outside(host));
    await ip('link', 'set', inside(host), 'netns', ns);
    await ip('addr', 'add', `${nodeAddress(host)}/24`, 'dev', outside(host));
    await ip('link', 'set', outside(host), 'up');
    await ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${hostAddress(host)}/24`, 'dev', inside(host));
    await ip('netns', 'exec', ns, 'ip', 'link', 'set', inside(host), 'up');
    await ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    // The other hosts' links end in the cluster's namespace too: the API host reaches node 3 through it.
    await ip('netns', 'exec', ns, 'ip', 'route', 'add', 'default', 'via', nodeAddress(host));
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cluster-partition-'));
    for (let host = 1; host <= API_HOST; host += 1) await makeHost(host);
    // The cluster: each node's MQTT listener on its host's link; its routes and monitoring on a
    // loopback address of this run's own (127.<octet>.0.<node>), where no other test's server or
    // outgoing connection can take a port between freePort() and the node's start.
    mqttPort = await freePort(nodeAddress(1));
    const clusterAddress = (node: number): string => `127.${octet}.0.${node}`;
    const routes: string[] = [];
    const monitors: string[] = [];
    for (let node = 1; node <= HOSTS; node += 1) {
      routes.push(`${clusterAddress(node)}:${await freePort(clusterAddress(node))}`);
      monitors.push(`${clusterAddress(node)}:${await freePort(clusterAddress(node))}`);
    }
    for (let node = 1; node <= HOSTS; node += 1) {
      nodes.push(
        await startNatsNode({
          serverName: `node-${node}`,
          dir: join(dir, `node-${node}`),
          mqttHost: nodeAddress(node),
          mqttPort,
          cluster: { name: 'station-sim', listen: routes[node - 1]!, routes: routes.filter((_, i) => i !== node - 1) },
          monitor: monitors[node - 1]!,
          ready: () => waitForTcp(nodeAddress(node), mqttPort, 30_000),
        }),
      );
    }
    const logs = (): string => nodes.map((node, i) => `--- node-${i + 1} ---\n${node.output().split('\n').slice(-15).join('\n')}`).join('\n');
    try {
      // JetStream elects a meta leader before the MQTT listener takes sessions: wait for each node
      // to say JetStream is healthy, then to take an MQTT session.
      for (let node = 1; node <= HOSTS; node += 1) {
        await eventually(
          async () => (await fetch(`http://${monitors[node - 1]}/healthz`).catch(() => undefined))?.ok === true,
          { timeout: 120_000, interval: 500, what: `NATS node ${node} to say JetStream is healthy` },
        );
      }
      for (let node = 1; node <= HOSTS; node += 1) {
        await eventually(
          async () => {
            const client = await mqtt.connectAsync(`mqtt://${nodeAddress(node)}:${mqttPort}`, { reconnectPeriod: 0, connectTimeout: 10_000 });
            await client.endAsync();
            return true;
          },
          { timeout: 60_000, interval: 500, what: `NATS node ${node} to take MQTT sessions` },
        );
      }
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\nthe nodes' last log lines:\n${logs()}`);
    }
    const fixturePath = join(dir, 'fixture.json');
    await writeFile(fixturePath, JSON.stringify(fixture()));
    const shards = [1, 2, 3].map(
      (host) =>
        new CliProcess(['stations', '--broker', `mqtt://${nodeAddress(host)}:${mqttPort}`, '--fixture', fixturePath, '--shard', `${host}/${HOSTS}`, '--json'], {}, {
          wrapper: ['ip', 'netns', 'exec', namespace(host)],
        }),
    );
    processes.push(...shards);
    // Started with the shards, not after them: each start takes seconds on a loaded machine.
    const apiProcess = new CliProcess(
      ['api', '--broker', `mqtt://${nodeAddress(3)}:${mqttPort}`, '--fixture', fixturePath, '--host', hostAddress(API_HOST), '--http-port', '0', '--json'],
      { STATION_SIM_CONTROL_TOKEN: CONTROL_TOKEN },
      { wrapper: ['ip', 'netns', 'exec', namespace(API_HOST)] },
    );
    processes.push(apiProcess);
    expect((await Promise.all(shards.map((shard) => shard.readyJson(90_000)))).map((ready) => ready.online)).toEqual([3, 3, 3]);
    apiUrl = (await apiProcess.readyJson(90_000)).apiUrl;
    accessToken = (await api('/v1/auth/login', { method: 'POST', body: JSON.stringify({ email: EMAIL, password: PASSWORD }) })).body.accessToken;
    observer = await MqttObserver.connect(`mqtt://${nodeAddress(2)}:${mqttPort}`, ['stations/+/status', 'stations/+/locks/+/state', 'stations/+/acks']);
  }, 360_000);

  afterAll(async () => {
    await observer?.close().catch(() => undefined);
    for (const process of processes) process.child.kill('SIGKILL');
    await Promise.all(processes.map((process) => process.exited));
    for (const node of nodes) await node.kill();
    // Whatever happened above: a namespace left behind would outlive the run.
    for (const ns of made.namespaces) await ip('netns', 'del', ns).catch(() => undefined);
    for (const link of made.links) await ip('link', 'del', link).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('sees every station of every host and unlocks one on each', async () => {
    await eventually(async () => expect(await onlineCount()).toBe(STATIONS), { timeout: 20_000, what: 'every station online' });
    for (let host = 1; host <= HOSTS; host += 1) {
      const token = stationsOfHost(host)[0]!;
      const before = new Date().toISOString();
      expect((await api(`/v1/stations/${token}/locks/1/unlock`, { method: 'POST' })).body).toEqual({ success: true });
      // The ack comes before the lock moves: wait for it to open and close again, or its opening
      // could land after the next test cut the host off and pass for a command that opened late.
      const state = `stations/${token}/locks/1/state`;
      const opened = await observer.waitFor((m) => m.topic === state && m.json?.status === 'unlocked' && m.json.lastUpdated >= before, `lock 1 of ${token} to open`, 10_000);
      await observer.waitFor((m) => m.topic === state && m.json?.status === 'locked' && m.json.lastUpdated >= opened.json.lastUpdated, `lock 1 of ${token} to close`, 10_000);
    }
  });

  it('cut off, a host’s stations go offline by their wills, unlocks fail safely, nothing opens late, and the fleet recovers', async () => {
    const cut = stationsOfHost(1);
    const others = [...stationsOfHost(2), ...stationsOfHost(3)];
    const partitioned = Date.now();
    const partitionedAt = new Date(partitioned).toISOString();
    await ip('link', 'set', outside(1), 'down');
    // Before the broker notices, the command goes out to a session that no longer answers.
    const meanwhile = await api(`/v1/stations/${cut[0]}/locks/1/unlock`, { method: 'POST' });
    expect([200, 504]).toContain(meanwhile.status);
    if (meanwhile.status === 504) expect(meanwhile.body.message).toMatch(/^The station did not acknowledge the command in time/);
    else expect(meanwhile.body).toEqual({ success: false, message: 'Station is offline' });
    // The host cannot publish anything: an `offline` from its stations now is the broker's, their wills.
    for (const token of cut) {
      await observer.waitFor((m) => m.topic === `stations/${token}/status` && m.json?.status === 'offline', `the will of ${token}`, 30_000);
    }
    const detected = Date.now();
    for (const token of cut) expect(await statusOf(token)).toBe('offline');
    for (const token of others) expect(await statusOf(token)).toBe('online');
    expect((await api(`/v1/stations/${cut[1]}/locks/1/unlock`, { method: 'POST' })).body).toEqual({ success: false, message: 'Station is offline' });
    expect((await api(`/v1/stations/${others[0]}/locks/1/unlock`, { method: 'POST' })).body).toEqual({ success: true });

    await new Promise((resolve) => setTimeout(resolve, HOLD_MS)); // a longer partition, when asked for
    const healed = Date.now();
    await ip('link', 'set', outside(1), 'up');
    await eventually(async () => expect(await onlineCount()).toBe(STATIONS), { timeout: 60_000, interval: 100, what: 'the cut-off host’s stations to come back' });
    const recovered = Date.now();
    for (const token of cut) expect(await statusOf(token)).toBe('online');
    console.log(JSON.stringify({ partition: { keepaliveSeconds: KEEPALIVE_SECONDS, detectMs: detected - partitioned, heldMs: healed - partitioned, recoverMs: recovered - healed, unlockMeanwhile: meanwhile.status } }));

    // Past the command's TTL, the cut-off station works again; a later command to its other lock
    // runs its course, and lock 1 (the command sent into the partition) never opened.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, partitioned + COMMAND_TTL_MS - Date.now())));
    const later = new Date().toISOString();
    expect((await api(`/v1/stations/${cut[0]}/locks/2/unlock`, { method: 'POST' })).body).toEqual({ success: true });
    await observer.waitFor((m) => m.topic === `stations/${cut[0]}/locks/2/state` && m.json?.status === 'locked' && m.json.lastUpdated > later, 'lock 2 to open and close', 10_000);
    const lateOpenings = observer.messages.filter((m) => m.topic === `stations/${cut[0]}/locks/1/state` && m.json?.status === 'unlocked' && m.json.lastUpdated >= partitionedAt);
    expect(lateOpenings).toEqual([]);
    expect((await api(`/v1/stations/${cut[0]}`)).body.locks[0].status).toBe('locked');
  }, 150_000 + HOLD_MS);
});
