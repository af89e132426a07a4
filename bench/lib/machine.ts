/**
 * The header of every result: which machine, which Node, which commit, and how busy the machine
 * was, so figures from different runs can be compared (or not).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import os from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  cpus: number;
  memoryGiB: number;
  os: string;
  node: string;
  /** Open files allowed per process (`ulimit -n`): caps TCP clients per process. */
  openFilesLimit: number | undefined;
  mosquitto: string | undefined;
  packages: Record<string, string | undefined>;
}

export interface RunHeader {
  /** When the run started, ISO 8601. */
  date: string;
  machine: MachineInfo;
  /** `git rev-parse HEAD`, and whether the working tree had changes (whose figures these partly are). */
  commit: string | undefined;
  dirty: boolean | undefined;
  /** 1-, 5- and 15-minute load averages when the run started. */
  loadAverageAtStart: number[];
}

function run(command: string, args: string[]): string | undefined {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** The version line of Mosquitto (`mosquitto -h` prints it and exits with 3). */
function mosquittoVersion(): string | undefined {
  const result = spawnSync('mosquitto', ['-h'], { encoding: 'utf8' });
  return /mosquitto version (\S+)/.exec(`${result.stdout}${result.stderr}`)?.[1];
}

async function packageVersion(name: string): Promise<string | undefined> {
  try {
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8');
    return (JSON.parse(text) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/**
 * The commit of the product measured (to tell whether it changed while the harness ran): this
 * checkout's, or that of `BENCH_PRODUCT_ROOT` when the children run another checkout.
 */
export function currentCommit(): string | undefined {
  const other = process.env.BENCH_PRODUCT_ROOT;
  return run('git', [...(other ? ['-C', other] : []), 'rev-parse', 'HEAD']);
}

export async function runHeader(date: Date): Promise<RunHeader> {
  const cpus = os.cpus();
  const limit = Number(run('sh', ['-c', 'ulimit -n']));
  const packages: Record<string, string | undefined> = {};
  for (const name of ['mqtt', 'aedes', 'fastify', 'autocannon']) packages[name] = await packageVersion(name);
  const other = process.env.BENCH_PRODUCT_ROOT;
  const status = run('git', [...(other ? ['-C', other] : []), 'status', '--porcelain']);
  return {
    date: date.toISOString(),
    machine: {
      cpuModel: cpus[0]?.model ?? 'unknown',
      cpus: cpus.length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
      openFilesLimit: Number.isFinite(limit) ? limit : undefined,
      mosquitto: mosquittoVersion(),
      packages,
    },
    commit: currentCommit(),
    dirty: status === undefined ? undefined : status.length > 0,
    loadAverageAtStart: os.loadavg().map((value) => Math.round(value * 100) / 100),
  };
}
