/**
 * The container image and the Kubernetes manifests of deploy/ (docs/scale-out.md, "On a container
 * orchestrator"), checked without a container runtime: the manifests are read as Kubernetes reads
 * them, and each pod's command is run as its container would run it, the image's entrypoint with
 * the pod's args, `$(VAR)` expanded from the pod's env, JOB_COMPLETION_INDEX 0 to n - 1, the
 * ConfigMap at its mount path, in a directory laid out as the image's /app, against a broker started
 * here. Where a Docker daemon answers, the image is built as well.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startEmbeddedBroker, type StartedBroker } from '../../src/broker/embedded-broker.js';
import { staleBuildNotice } from '../../src/cli/stale-build.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { shardStations } from '../../src/simulator/start-simulator.js';
import { eventually } from '../helpers/eventually.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import { inCi } from '../helpers/required-tool.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** The parts of a Kubernetes object this test reads (core/v1 and batch/v1, as far as used). */
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: unknown; fieldRef?: unknown };
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args: string[];
  env?: EnvVar[];
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  restartPolicy?: string;
  containers: Container[];
  volumes?: { name: string; configMap?: { name: string } }[];
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: {
    completionMode?: string;
    completions?: number;
    parallelism?: number;
    replicas?: number;
    selector?: Record<string, unknown>;
    template?: { metadata?: { labels?: Record<string, string> }; spec: PodSpec };
    ports?: { port: number; targetPort: string | number }[];
  };
}

function manifests(path: string): K8sObject[] {
  return parseAllDocuments(read(path)).map((document) => {
    expect(document.errors, `${path} parses as YAML`).toEqual([]);
    return document.toJS() as K8sObject;
  });
}

const OBJECTS = [...manifests('deploy/kubernetes/stations-indexed-job.yaml'), ...manifests('deploy/kubernetes/api.yaml')];
const find = (kind: string, name: string): K8sObject => {
  const found = OBJECTS.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`deploy/kubernetes has no ${kind} ${name}`);
  return found;
};
const JOB = find('Job', 'station-sim-stations');
const API = find('Deployment', 'station-sim-api');
const CONFIG_MAP = find('ConfigMap', 'station-sim-fixture');
const containerOf = (object: K8sObject): Container => object.spec!.template!.spec.containers[0]!;

/** The value after `flag` in `args`. */
function flagValue(args: string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  return at < 0 ? undefined : args[at + 1];
}

/** The Dockerfile's instructions (continuation lines joined, comments dropped), by stage. */
function dockerfileStages(text: string): { instruction: string; rest: string }[][] {
  const stages: { instruction: string; rest: string }[][] = [];
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
  for (const line of lines) {
    const [, instruction = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line)!;
    if (instruction.toUpperCase() === 'FROM') stages.push([]);
    stages.at(-1)?.push({ instruction: instruction.toUpperCase(), rest });
  }
  return stages;
}

const DOCKERFILE = dockerfileStages(read('deploy/Dockerfile'));
const RUN_STAGE = DOCKERFILE.at(-1)!;
const lastOf = (name: string): string | undefined => RUN_STAGE.filter((step) => step.instruction === name).at(-1)?.rest;
/** The exec form only: a shell form would put /bin/sh between Kubernetes' SIGTERM and the CLI. */
const ENTRYPOINT = JSON.parse(lastOf('ENTRYPOINT') ?? 'null') as string[];
const MANIFEST = JSON.parse(read('package.json')) as { version: string; bin: Record<string, string> };

describe('deploy/Dockerfile', () => {
  it("runs the package's bin as a non-root user, from a stage with production dependencies only", () => {
    expect(DOCKERFILE.length).toBeGreaterThanOrEqual(2);
    expect(ENTRYPOINT).toEqual(['node', MANIFEST.bin['station-sim']!.replace(/^\.\//, '')]);
    expect(lastOf('WORKDIR')).toBe('/app');
    const user = lastOf('USER') ?? '';
    expect(user, 'numeric (runAsNonRoot checks only numbers), not root').toMatch(/^[1-9]\d*(:\d+)?$/);
    const installs = RUN_STAGE.filter((step) => step.instruction === 'RUN' && /\bnpm ci\b/.test(step.rest));
    expect(installs.map((step) => step.rest)).toEqual([expect.stringMatching(/--omit=dev\b.*--ignore-scripts|--ignore-scripts.*--omit=dev\b/)]);
    // The run stage has the compiled CLI from the build stage, and never the sources.
    expect(RUN_STAGE.some((step) => step.instruction === 'COPY' && /^--from=\S+ \/app\/dist \.\/dist$/.test(step.rest))).toBe(true);
    expect(RUN_STAGE.filter((step) => step.instruction === 'COPY' && /\bsrc\b/.test(step.rest))).toEqual([]);
  });

  it('.dockerignore lets in what the Dockerfile copies, and nothing else', () => {
    const allowed = read('.dockerignore')
      .split('\n')
      .filter((line) => line.startsWith('!'))
      .map((line) => line.slice(1).replace(/\/$/, ''));
    expect(read('.dockerignore').split('\n').filter((line) => line !== '' && !line.startsWith('#'))[0]).toBe('*');
    const copied = DOCKERFILE.flat()
      .filter((step) => step.instruction === 'COPY' && !step.rest.startsWith('--from'))
      .flatMap((step) => step.rest.split(/\s+/).slice(0, -1));
    expect(new Set(copied)).toEqual(new Set(allowed));
  });
});

describe('deploy/kubernetes', () => {
  it('runs the stations as an Indexed Job whose completions, parallelism and shard count agree', () => {
    const container = containerOf(JOB);
    const shards = flagValue(container.args, '--shard-from-env');
    expect(JOB.apiVersion).toBe('batch/v1');
    expect(JOB.spec).toMatchObject({ completionMode: 'Indexed', completions: Number(shards), parallelism: Number(shards) });
    expect(Number(shards)).toBeGreaterThan(1);
    // A Job's pods may not restart Always; OnFailure restarts a failed shard in its pod, index kept.
    expect(JOB.spec!.template!.spec.restartPolicy).toBe('OnFailure');
    expect(container.args[0]).toBe('stations');
    expect(container.args).not.toContain('--shard');
  });

  it("keeps the image's entrypoint, and reads its fixture from the ConfigMap", () => {
    // That the args are a valid invocation, the pods below show by running them.
    for (const object of [JOB, API]) {
      const container = containerOf(object);
      expect(container.command, `${object.kind} ${object.metadata.name} runs the entrypoint`).toBeUndefined();
      expect(container.image).toBe(`station-sim:${MANIFEST.version}`);
      const fixture = flagValue(container.args, '--fixture')!;
      const mount = container.volumeMounts!.find((m) => fixture.startsWith(`${m.mountPath}/`))!;
      const volume = object.spec!.template!.spec.volumes!.find((v) => v.name === mount.name)!;
      expect(volume.configMap?.name).toBe(CONFIG_MAP.metadata.name);
      expect(Object.keys(CONFIG_MAP.data!)).toContain(fixture.slice(mount.mountPath.length + 1));
    }
    const service = find('Service', 'station-sim-api');
    expect(service.spec!.selector).toEqual(API.spec!.template!.metadata!.labels);
  });

  it('takes the broker and every credential from a Secret, never inline', () => {
    for (const object of [JOB, API]) {
      const env = containerOf(object).env ?? [];
      expect(env.filter((variable) => variable.value !== undefined).map((variable) => variable.name)).toEqual([]);
      const fromSecrets = env.filter((variable) => variable.valueFrom?.secretKeyRef).map((variable) => variable.name);
      expect(fromSecrets).toEqual(expect.arrayContaining(['BROKER_URL', 'STATION_SIM_BROKER_USERNAME', 'STATION_SIM_BROKER_PASSWORD']));
      expect(flagValue(containerOf(object).args, '--broker')).toBe('$(BROKER_URL)');
    }
    expect(containerOf(API).env!.filter((variable) => variable.valueFrom?.secretKeyRef).map((variable) => variable.name)).toEqual(
      expect.arrayContaining(['STATION_SIM_CONTROL_TOKEN', 'STATION_SIM_JWT_SECRET']),
    );
    expect(OBJECTS.filter((object) => object.kind === 'Secret'), 'Secrets are made by hand, not committed').toEqual([]);
  });
});

/** Kubernetes' `$(VAR)` expansion of args: from the container's env, `$$` for a literal `$`, unknown names left as written. */
function expand(arg: string, env: Record<string, string>): string {
  return arg.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string | undefined) => (name === undefined ? '$' : (env[name] ?? whole)));
}

/** A pod's container, run as a process: the image's entrypoint, the pod's args and env. */
class Pod {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = '';
  stderr = '';

  constructor(app: string, args: string[], env: Record<string, string>) {
    const [command, ...entryArgs] = ENTRYPOINT;
    // `node` of the image is this test's node; the pod's env only, as a container has no other.
    const file = command === 'node' ? process.execPath : command!;
    this.child = spawn(file, [...entryArgs, ...args], { cwd: app, env: { PATH: process.env.PATH ?? '', ...env } });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
  }

  async ready(what: string): Promise<Record<string, any>> {
    await eventually(() => expect(this.stdout).toContain('\n'), {
      what: `the ready line of ${what}`,
      timeout: 60_000,
      interval: 50,
      failIf: () => (this.child.exitCode === null ? undefined : `${what} exited with ${this.child.exitCode}: ${this.stderr}`),
    });
    return JSON.parse(this.stdout.split('\n')[0]!) as Record<string, any>;
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.kill('SIGTERM');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(killer);
    return code;
  }
}

/**
 * A directory laid out as the image's /app (the run stage's COPY lines): bin/ and package.json
 * copied, so the bin finds dist/ beside itself; fixtures/, node_modules/ and an up-to-date dist/
 * linked. No src/, as in the image. A dist/ older than src/ (sources edited since `npm run build`)
 * is compiled afresh here, as the image's build stage would.
 */
function imageApp(into: string): string {
  const app = join(into, 'app');
  mkdirSync(app);
  cpSync(join(ROOT, 'bin'), join(app, 'bin'), { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  for (const linked of ['fixtures', 'node_modules']) symlinkSync(join(ROOT, linked), join(app, linked));
  if (staleBuildNotice(ROOT) === undefined) symlinkSync(join(ROOT, 'dist'), join(app, 'dist'));
  else {
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', join(app, 'dist'), '--tsBuildInfoFile', join(app, 'dist/.tsbuildinfo')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect({ status: tsc.status, output: tsc.stdout + tsc.stderr }).toEqual({ status: 0, output: '' });
  }
  return app;
}

/** Each Secret's values here: test values, nowhere else. */
function podEnv(container: Container, secrets: Record<string, string>, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { ...extra };
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    const value = ref ? secrets[`${ref.name}/${ref.key}`] : variable.value;
    if (value !== undefined) env[variable.name] = value;
  }
  return env;
}

describe('the pods, run as Kubernetes would run them, without a container runtime', () => {
  let work: string;
  let app: string;
  let broker: StartedBroker;
  let observer: MqttObserver;
  let secrets: Record<string, string>;
  const pods: Pod[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'station-sim-deploy-'));
    app = imageApp(work);
    // The ConfigMap's keys as files under the mount path, which is rewritten below to this folder.
    const mounted = join(work, 'fixtures');
    mkdirSync(mounted);
    for (const [key, value] of Object.entries(CONFIG_MAP.data!)) writeFileSync(join(mounted, key), value);
    broker = await startEmbeddedBroker({ port: 0 });
    observer = await MqttObserver.connect(broker.url, ['stations/+/status']);
    secrets = {
      'station-sim-broker/url': broker.url,
      'station-sim-broker/username': 'shard-user',
      'station-sim-broker/password': 'not-a-real-password',
      'station-sim-api/control-token': 'test-control-token',
      'station-sim-api/jwt-secret': 'test-jwt-secret-of-at-least-32-bytes!!',
    };
  }, 300_000);

  afterAll(async () => {
    const codes = await Promise.all(pods.map((pod) => pod.stop()));
    expect(codes.every((code) => code === 0), `every pod stops with 0 on SIGTERM: ${codes.join(', ')}`).toBe(true);
    await observer?.client.endAsync();
    await broker?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 60_000);

  /** The container's args as its process gets them: `$(VAR)` expanded, the mount path pointed at this run's copy. */
  function argvOf(object: K8sObject, env: Record<string, string>): string[] {
    const container = containerOf(object);
    const mount = container.volumeMounts!.find((m) => m.name === 'fixture')!;
    return container.args.map((arg) => expand(arg, env).replace(new RegExp(`^${mount.mountPath}/`), `${join(work, 'fixtures')}/`));
  }

  it('n shards from JOB_COMPLETION_INDEX 0 to n - 1 bring up every station of the fixture, each exactly once', async () => {
    const container = containerOf(JOB);
    const count = JOB.spec!.completions!;
    const fixture = parseFixture(JSON.parse(CONFIG_MAP.data!['fleet.json']!), 'the ConfigMap');
    const tokens = fixture.stations.map((station) => station.token);
    const started = Array.from({ length: count }, (_, index) => {
      // Kubernetes sets JOB_COMPLETION_INDEX in each pod of an Indexed Job (batch/v1, completionMode).
      const env = podEnv(container, secrets, { JOB_COMPLETION_INDEX: String(index) });
      const pod = new Pod(app, argvOf(JOB, env), env);
      pods.push(pod);
      return pod;
    });
    const ready = await Promise.all(started.map((pod, index) => pod.ready(`pod ${index}`)));
    // Pod i runs shard i + 1: the same split as `--shard i+1/n`, and together the whole fleet once.
    expect(ready.map((line) => line.stations)).toEqual(started.map((_, index) => shardStations(tokens, { index: index + 1, count }).length));
    expect(ready.map((line) => line.online)).toEqual(ready.map((line) => line.stations));
    expect(ready.reduce((sum, line) => sum + line.stations, 0)).toBe(tokens.length);
    // What the broker holds: every station online, none missing, none twice (a twin would flap).
    const online = (): string[] => {
      const latest = new Map<string, string>();
      for (const seen of observer.messages) latest.set(seen.topic.split('/')[1]!, seen.json?.status);
      return [...latest].filter(([, status]) => status === 'online').map(([token]) => token).sort();
    };
    await eventually(() => expect(online()).toEqual([...tokens].sort()), { what: 'every station online on the broker', timeout: 30_000, interval: 50 });
    for (const pod of started) expect(pod.stderr).not.toMatch(/another process may run it too|closed station/);
  }, 120_000);

  it('the API pod answers for every station of every shard', async () => {
    const container = containerOf(API);
    const env = podEnv(container, secrets, {});
    // The pod has a network namespace of its own; here the API listens on loopback and a free port.
    const args = argvOf(API, env);
    args[args.indexOf('--host') + 1] = '127.0.0.1';
    args[args.indexOf('--http-port') + 1] = '0';
    const pod = new Pod(app, args, env);
    pods.push(pod);
    const { apiUrl } = await pod.ready('the API pod');
    const total = parseFixture(JSON.parse(CONFIG_MAP.data!['fleet.json']!), 'the ConfigMap').stations.length;
    const headers = { authorization: `Bearer ${env.STATION_SIM_CONTROL_TOKEN}` };
    expect((await fetch(`${apiUrl}/v1/openapi.json`)).status).toBe(200);
    await eventually(
      async () => expect((await (await fetch(`${apiUrl}/sim/v1/health`, { headers })).json()).stations).toEqual({ total, online: total, offline: 0 }),
      { what: "every station online in the API's health", timeout: 30_000, interval: 200 },
    );
    expect((await fetch(`${apiUrl}/sim/v1/health`)).status, 'the control plane wants the token from the Secret').toBe(401);
  }, 120_000);
});

/** Whether a Docker daemon answers here; said in one loud line when not (the tests above run either way). */
function dockerAnswers(): boolean {
  const answers = spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 20_000 }).status === 0;
  if (!answers) {
    console.warn(
      `\n*** docker: no daemon answers: the image build is SKIPPED${inCi() ? ' (also under CI)' : ''}; its entry command runs without one in the tests above ***\n`,
    );
  }
  return answers;
}

describe.runIf(dockerAnswers())('the image, where a Docker daemon answers', () => {
  it('builds, and its entrypoint runs the CLI', () => {
    const tag = `station-sim-test:${process.pid}`;
    const build = spawnSync('docker', ['build', '-f', 'deploy/Dockerfile', '-t', tag, '.'], { cwd: ROOT, encoding: 'utf8', timeout: 900_000 });
    expect(build.status, build.stderr.slice(-4000)).toBe(0);
    try {
      const version = spawnSync('docker', ['run', '--rm', tag, '--version'], { encoding: 'utf8', timeout: 120_000 });
      expect(version.stdout).toBe(`${MANIFEST.version}\n`);
    } finally {
      spawnSync('docker', ['rmi', '-f', tag], { stdio: 'ignore', timeout: 60_000 });
    }
  }, 1_000_000);
});
