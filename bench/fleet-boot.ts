/**
 * Fleet boot benchmark: N stations × L locks, each with its own MQTT session over an in-memory
 * stream into the embedded aedes broker, in this one process. Reports the time until every station
 * is connected, subscribed and has published its retained state, and the memory it takes.
 *
 *   npx tsx bench/fleet-boot.ts --stations 10000 --locks 4 [--runs 3] [--json out.json]
 *
 * Each run is a fresh child process, so one run's garbage does not weigh on the next.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startEmbeddedBroker } from '../src/broker/embedded-broker.js';
import { startFleet } from '../src/fleet/start-fleet.js';
import { parseFixture } from '../src/fixture/load-fixture.js';

const { values } = parseArgs({
  options: {
    stations: { type: 'string', default: '10000' },
    locks: { type: 'string', default: '4' },
    runs: { type: 'string', default: '3' },
    json: { type: 'string' },
    child: { type: 'boolean', default: false },
  },
});
const stations = Number(values.stations);
const locks = Number(values.locks);

export interface BootResult {
  stations: number;
  locks: number;
  bootMs: number;
  peakRssMiB: number;
  rssAfterMiB: number;
  baselineRssMiB: number;
  kibPerStation: number;
  retainedMessages: number;
}

async function once(): Promise<BootResult> {
  const fixture = parseFixture({
    defaults: { heartbeatMs: 0 },
    fleets: [{ count: stations, tokenPattern: 'B-{n}', firstStationId: 1, locksPerStation: locks }],
  });
  global.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const broker = await startEmbeddedBroker({ port: 0 });
  const started = performance.now();
  const fleet = await startFleet({ stations: fixture.stations, transport: { kind: "memory", broker }, seed: 1 });
  const bootMs = performance.now() - started;
  if (fleet.onlineCount() !== stations) throw new Error(`only ${fleet.onlineCount()} of ${stations} stations online`);
  global.gc?.();
  const after = process.memoryUsage().rss;
  peak = Math.max(peak, after);
  clearInterval(sampler);
  // Every status and lock state must be retained in the broker. aedes sends PUBACK before its
  // retained store has settled, so give it one turn of the event loop first.
  await new Promise((resolve) => setTimeout(resolve, 0));
  let retained = 0;
  // aedes' types do not declare `persistence`, which it exposes at run time.
  const stream = (broker.aedes as unknown as { persistence: { createRetainedStreamCombi(patterns: string[]): AsyncIterable<unknown> } }).persistence.createRetainedStreamCombi(['stations/#']);
  const kinds: Record<string, number> = {};
  for await (const packet of stream) {
    retained += 1;
    const kind = (packet as { topic: string }).topic.split("/").at(-1)!;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  if (retained !== stations * (locks + 1)) throw new Error(`expected ${stations * (locks + 1)} retained messages, found ${JSON.stringify(kinds)}`);
  await fleet.stop();
  await broker.stop();
  const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
  return {
    stations,
    locks,
    bootMs: Math.round(bootMs),
    peakRssMiB: mib(peak),
    rssAfterMiB: mib(after),
    baselineRssMiB: mib(baseline),
    kibPerStation: Math.round(((after - baseline) / 1024 / stations) * 10) / 10,
    retainedMessages: retained,
  };
}

if (values.child) {
  process.stdout.write(`${JSON.stringify(await once())}\n`);
} else {
  const results: BootResult[] = [];
  for (let run = 0; run < Number(values.runs); run += 1) {
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', new URL(import.meta.url).pathname, '--child', '--stations', String(stations), '--locks', String(locks)], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    if (child.status !== 0) throw new Error(`run ${run + 1} failed: ${child.stderr}`);
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as BootResult;
    results.push(result);
    process.stderr.write(`run ${run + 1}: ${JSON.stringify(result)}\n`);
  }
  const median = (key: keyof BootResult) => {
    const sorted = results.map((r) => r[key]).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  const summary = {
    machine: { node: process.version, cpus: (await import('node:os')).cpus().length, platform: process.platform },
    stations,
    locks,
    runs: results.length,
    median: { bootMs: median('bootMs'), peakRssMiB: median('peakRssMiB'), rssAfterMiB: median('rssAfterMiB'), kibPerStation: median('kibPerStation') },
    results,
  };
  if (values.json) writeFileSync(values.json, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`| stations | locks | boot (median) | peak RSS | RSS after boot | per station |`);
  console.log(`|---|---|---|---|---|---|`);
  console.log(`| ${stations} | ${locks} | ${summary.median.bootMs} ms | ${summary.median.peakRssMiB} MiB | ${summary.median.rssAfterMiB} MiB | ${summary.median.kibPerStation} KiB |`);
}
