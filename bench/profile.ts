/**
 * Where the time of an unlock goes: the process running the API is CPU-profiled (V8's sampling
 * profiler, as `node --cpu-prof`, but only while the driver puts unlock load on it), then self time
 * per function and per package is read from the profile. With the embedded broker that process
 * also runs the broker and the stations, so the profile is the whole round trip; with Mosquitto it
 * is the API alone.
 */
import { mkdtempSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrokerKind } from './boot.js';
import { login, runLoad, startUnlockServers, type LoadRun } from './lib/servers.js';
import { readCpuProfile, summarizeProfile, type ProfileSummary } from './lib/cpu-profile.js';
import type { ProfileFiles } from './lib/self-profiler.js';

export interface ProfileOptions {
  broker: BrokerKind;
  /** Seconds of load while profiling. @default 10 */
  seconds?: number;
  /** @default 100 */
  connections?: number;
  /** Keep the `.cpuprofile` here (open it in Chrome DevTools or speedscope). @default not kept */
  keepAs?: string;
  log: (line: string) => void;
  verbose?: boolean;
}

export interface ProfileResult extends ProfileSummary {
  broker: BrokerKind;
  /**
   * The process's other threads over the same load (the embedded broker's thread): each profile
   * summarised on its own, shares of that thread's samples.
   */
  threads?: (ProfileSummary & { title: string })[];
  seconds: number;
  connections: number;
  load: Pick<LoadRun, 'rps' | 'latency' | 'cpu'>;
  profileFile?: string;
}

export async function runProfile(options: ProfileOptions): Promise<ProfileResult> {
  const seconds = options.seconds ?? 10;
  const connections = options.connections ?? 100;
  const stations = 1000;
  const locks = 4;
  const dir = mkdtempSync(path.join(tmpdir(), 'station-sim-bench-prof-'));
  const file = path.join(dir, 'api.cpuprofile');
  let files: ProfileFiles = { file, workers: [] };
  try {
    const servers = await startUnlockServers({ broker: options.broker, stations, locks, verbose: options.verbose ?? false });
    let load: LoadRun;
    try {
      const token = await login(servers.apiUrl);
      // A short warm-up, so the profile shows optimised code rather than the JIT at work.
      await runLoad({ url: servers.apiUrl, kind: 'unlock', connections, durationSeconds: 2, stations, locks }, { token, processes: servers.processes });
      let profiling: Promise<unknown> = Promise.resolve();
      load = await runLoad(
        { url: servers.apiUrl, kind: 'unlock', connections, durationSeconds: seconds, stations, locks, offset: 1 },
        {
          token,
          processes: servers.processes,
          verbose: options.verbose ?? false,
          onStarted: () => {
            profiling = servers.callApi('profile-start');
          },
        },
      );
      await profiling;
      files = await servers.callApi<ProfileFiles>('profile-stop', { file });
    } finally {
      await servers.stop();
    }
    // Samples inside the profiler's own stop call are the profiler's cost, not the unlock path's.
    const summary = summarizeProfile(readCpuProfile(file), { excludeUrl: /self-profiler/ });
    const threads = files.workers.map((worker) => ({ title: worker.title, ...summarizeProfile(readCpuProfile(worker.file)) }));
    if (options.keepAs) copyFileSync(file, options.keepAs);
    files.workers.forEach((worker, index) => {
      if (options.keepAs) copyFileSync(worker.file, options.keepAs!.replace(/(\.cpuprofile)?$/, `.worker-${index + 1}.cpuprofile`));
    });
    options.log(`profile ${options.broker}: ${Math.round(load.rps)} req/s while profiling; ${summary.owners.slice(0, 6).map((o) => `${o.owner} ${o.percent}%`).join(', ')}`);
    for (const thread of threads) options.log(`  thread "${thread.title}": ${thread.owners.slice(0, 6).map((o) => `${o.owner} ${o.percent}%`).join(', ')}`);
    return {
      broker: options.broker,
      seconds,
      connections,
      load: { rps: load.rps, latency: load.latency, cpu: load.cpu },
      ...summary,
      ...(threads.length > 0 ? { threads } : {}),
      ...(options.keepAs ? { profileFile: options.keepAs } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
