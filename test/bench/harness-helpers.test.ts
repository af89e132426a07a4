/**
 * The pure helpers of the benchmark harness (bench/lib): statistics, argument parsing, the fixtures'
 * token rule, /proc parsing, profile summaries and report formatting. The harness itself starts
 * processes and brokers for minutes; these are the parts that can be wrong quietly.
 */
import { describe, expect, it } from 'vitest';
import { median, medianFigures, percentile, summarizeLatencies } from '../../bench/lib/stats.js';
import { DEFAULT_PARTS, defaultOutPath, parseBenchArgs } from '../../bench/lib/args.js';
import { unlockFixture, unlockPath, unlockTargets, unlockTokens } from '../../bench/lib/fixtures.js';
import { parseProcStatus } from '../../bench/lib/proc.js';
import { actorOf, ownerOf, summarizeProfile, type CpuProfile } from '../../bench/lib/cpu-profile.js';
import { formatMiB, formatMs } from '../../bench/lib/report.js';
import { mosquittoConfig } from '../../bench/lib/mosquitto.js';
import { recordServerLatency } from '../../bench/lib/server-latency.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { runLoad } from '../../bench/lib/servers.js';

describe('stats', () => {
  it('takes the median of odd and even counts, ignoring non-finite values', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, Number.NaN])).toBe(5);
    expect(median([])).toBeNaN();
  });

  it('uses nearest-rank percentiles', () => {
    const sorted = Array.from({ length: 100 }, (_, index) => index + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
  });

  it('summarises latencies without sorting the input in place', () => {
    const samples = [3, 1, 2, 10];
    const summary = summarizeLatencies(samples);
    expect(summary).toMatchObject({ count: 4, mean: 4, p50: 2, max: 10 });
    expect(samples).toEqual([3, 1, 2, 10]);
  });

  it('takes the median per key and leaves out runs that lack a key', () => {
    expect(medianFigures<{ a: number; b: number }>([{ a: 1, b: 10 }, { a: 3 }, { a: 2, b: 20 }])).toEqual({ a: 2, b: 15 });
  });
});

describe('arguments', () => {
  it('defaults to a full run of every part', () => {
    const options = parseBenchArgs([]);
    expect(options).toMatchObject({ quick: false, runs: 3, sizes: [1000, 10_000, 100_000], connections: [1, 10, 100], soakSeconds: 300 });
    expect(options.parts).toEqual([...DEFAULT_PARTS]);
  });

  it('makes --quick short and lets explicit flags win', () => {
    expect(parseBenchArgs(['--quick'])).toMatchObject({ runs: 1, sizes: [1000, 10_000], soakSeconds: 20, durationSeconds: 2 });
    expect(parseBenchArgs(['--quick', '--runs', '2', '--soak-seconds', '5'])).toMatchObject({ runs: 2, soakSeconds: 5 });
  });

  it('leaves the first second of every unlock and hello-world load unmeasured unless told otherwise', () => {
    expect(parseBenchArgs([]).rampSeconds).toBe(1);
    expect(parseBenchArgs(['--ramp', '0']).rampSeconds).toBe(0);
    expect(() => parseBenchArgs(['--ramp', '-1'])).toThrow(/--ramp/);
  });

  it('runs the soak beside login floods of 43/s from 1 and 64 addresses, shorter in quick runs', () => {
    expect(parseBenchArgs([])).toMatchObject({ floodSeconds: 60, floodRate: 43, floodAddresses: [1, 64] });
    expect(parseBenchArgs(['--quick'])).toMatchObject({ floodSeconds: 10 });
    expect(parseBenchArgs(['--flood-seconds', '0', '--flood-addresses', '8'])).toMatchObject({ floodSeconds: 0, floodAddresses: [8] });
    expect(() => parseBenchArgs(['--flood-addresses', '300'])).toThrow(/--flood-addresses takes counts from 1 to 250/);
    expect(() => parseBenchArgs(['--flood-rate', '0'])).toThrow(/--flood-rate/);
  });

  it('runs the parts named by --only in the documented order', () => {
    expect(parseBenchArgs(['--only', 'soak,boot']).parts).toEqual(['boot', 'soak']);
  });

  it('refuses unknown parts, bad numbers and unknown flags with one line', () => {
    expect(() => parseBenchArgs(['--only', 'boot,nope'])).toThrow(/unknown part nope/);
    expect(() => parseBenchArgs(['--runs', '0'])).toThrow(/--runs/);
    expect(() => parseBenchArgs(['--sizes', '1000,x'])).toThrow(/--sizes/);
    expect(() => parseBenchArgs(['--frobnicate'])).toThrow();
  });

  it('names the output by date', () => {
    expect(defaultOutPath(new Date('2026-11-22T10:00:00Z'), false)).toBe('bench/results/2026-11-22.json');
    expect(defaultOutPath(new Date('2026-11-22T10:00:00Z'), true)).toBe('bench/results/2026-11-22-quick.json');
  });
});

describe('fixtures', () => {
  it('predicts the tokens the fixture loader generates', () => {
    const fixture = parseFixture(unlockFixture({ stations: 120, locksPerStation: 2 }));
    expect(fixture.stations.map((station) => station.token)).toEqual(unlockTokens(120));
    expect(fixture.accounts[0]!.stations).toHaveLength(120);
    expect(fixture.stations[0]!.behaviour.unlockDelayMs).toBe(0);
  });

  it('rotates over every lock, lock 1 of every station first', () => {
    const targets = unlockTargets(3, 2);
    expect(targets.map((t) => `${t.token}/${t.lockId}`)).toEqual(['U-1/1', 'U-2/1', 'U-3/1', 'U-1/2', 'U-2/2', 'U-3/2']);
    expect(unlockPath(targets[0]!)).toBe('/v1/stations/U-1/locks/1/unlock');
  });
});

describe('/proc and Mosquitto config', () => {
  it('reads VmRSS and VmHWM', () => {
    expect(parseProcStatus('Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n')).toEqual({ rssKiB: 102_400, hwmKiB: 204_800 });
    expect(parseProcStatus('Name:\tkthreadd\n')).toBeUndefined();
  });

  it('writes a loopback listener without persistence or connection limit', () => {
    const config = mosquittoConfig(40_001);
    expect(config).toContain('listener 40001 127.0.0.1');
    expect(config).toContain('persistence false');
    expect(config).toContain('max_connections -1');
    expect(config).toContain('set_tcp_nodelay true');
  });
});

describe('CPU profiles', () => {
  it('names the owner of a script', () => {
    expect(ownerOf('file:///w/node_modules/.pnpm/x/node_modules/@fastify/ajv-compiler/index.js', 'f')).toBe('@fastify/ajv-compiler');
    expect(ownerOf('file:///w/node_modules/mqtt-packet/parser.js', 'parse')).toBe('mqtt-packet');
    expect(ownerOf('file:///w/main/src/service/station-gateway.ts', 'unlock')).toBe('station-sim src/service');
    expect(ownerOf('node:events', 'emit')).toBe('node (built-in)');
    expect(ownerOf('', '(garbage collector)')).toBe('(garbage collector)');
  });

  it('adds up self time per function and per owner', () => {
    const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 3] },
        { id: 2, callFrame: frame('parse', 'file:///w/node_modules/mqtt-packet/parser.js') },
        { id: 3, callFrame: frame('(garbage collector)', '') },
      ],
      startTime: 0,
      endTime: 4000,
      samples: [2, 2, 3, 2],
      timeDeltas: [1000, 1000, 1000, 1000],
    };
    const summary = summarizeProfile(profile);
    expect(summary.totalMs).toBe(4);
    expect(summary.functions[0]).toMatchObject({ name: 'parse', owner: 'mqtt-packet', selfMs: 3, percent: 75 });
    expect(summary.owners).toEqual([
      { owner: 'mqtt-packet', selfMs: 3, percent: 75 },
      { owner: '(garbage collector)', selfMs: 1, percent: 25 },
    ]);
  });
});

describe('CPU profiles by part of the simulator', () => {
  it('names the part a script works for', () => {
    expect(actorOf('file:///w/src/service/station-gateway.ts')).toBe('API gateway (MQTT side of /v1)');
    expect(actorOf('file:///w/src/service/http/station-routes.ts')).toBe('HTTP (fastify, auth, routes)');
    expect(actorOf('file:///w/node_modules/fastify/lib/route.js')).toBe('HTTP (fastify, auth, routes)');
    expect(actorOf('file:///w/src/station/station-model.ts')).toBe('stations (model and MQTT binding)');
    expect(actorOf('file:///w/node_modules/aedes/lib/handlers/publish.js')).toBe('broker (aedes)');
    expect(actorOf('file:///w/src/broker/thread-protocol.ts')).toBe('link between threads (batches)');
    expect(actorOf('file:///w/src/broker/retained-index.ts')).toBe('broker (aedes)');
    expect(actorOf('file:///w/node_modules/mqtt-packet/parser.js')).toBeUndefined();
    expect(actorOf('node:internal/streams/writable')).toBeUndefined();
  });

  it('gives each sample to the innermost part on its stack, and V8 pseudo-frames to themselves', () => {
    const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 6] },
        { id: 2, callFrame: frame('handle', 'file:///w/node_modules/aedes/lib/client.js'), children: [3] },
        { id: 3, callFrame: frame('onPacket', 'file:///w/src/mqtt/station-client.ts'), children: [4] },
        { id: 4, callFrame: frame('parse', 'file:///w/node_modules/mqtt-packet/parser.js') },
        { id: 6, callFrame: frame('(garbage collector)', '') },
        { id: 7, callFrame: frame('uncork', 'node:internal/streams/writable') },
      ],
      startTime: 0,
      endTime: 5000,
      samples: [4, 4, 2, 6, 7],
      timeDeltas: [1000, 1000, 1000, 1000, 1000],
    };
    profile.nodes[0]!.children!.push(7);
    expect(summarizeProfile(profile).actors).toEqual([
      { actor: 'stations (model and MQTT binding)', selfMs: 2, percent: 40 },
      { actor: 'broker (aedes)', selfMs: 1, percent: 20 },
      { actor: '(garbage collector)', selfMs: 1, percent: 20 },
      { actor: 'other (streams, timers, event loop)', selfMs: 1, percent: 20 },
    ]);
  });
});

describe('report formatting', () => {
  it('formats times and sizes for people', () => {
    expect(formatMs(0.873)).toBe('0.87 ms');
    expect(formatMs(43.4)).toBe('43 ms');
    expect(formatMs(5822)).toBe('5.82 s');
    expect(formatMs(115_000)).toBe('1 min 55 s');
    expect(formatMs(undefined)).toBe('–');
    expect(formatMiB(575.4)).toBe('575 MiB');
    expect(formatMiB(3686)).toBe('3.6 GiB');
  });
});

describe('server-side latency', () => {
  it('times each request from arrival to finished response, and take() hands them over once', async () => {
    const latency = recordServerLatency();
    const server = http.createServer((_request, response) => {
      setTimeout(() => response.end('ok'), 25);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await Promise.all([1, 2, 3].map(() => fetch(`http://127.0.0.1:${port}/`).then((response) => response.text())));
      const taken = latency.take();
      expect(taken).toHaveLength(3);
      for (const ms of taken) expect(ms).toBeGreaterThanOrEqual(24);
      expect(latency.take()).toEqual([]);
      latency.stop();
      await fetch(`http://127.0.0.1:${port}/`).then((response) => response.text());
      expect(latency.take()).toEqual([]);
    } finally {
      latency.stop();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('the load driver (bench/children/load.ts, a real autocannon process)', () => {
  it('keeps the answers of the ramp out of every measured figure, and the harness counts CPU from its end', async () => {
    // For its first 300 ms the server answers slowly and with 503; after that, at once and well.
    let firstRequestAt: number | undefined;
    const server = http.createServer((_request, response) => {
      firstRequestAt ??= performance.now();
      if (performance.now() - firstRequestAt < 300) {
        setTimeout(() => response.writeHead(503).end('{"message":"warming"}'), 50);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    let started = 0;
    try {
      const run = await runLoad(
        { url: `http://127.0.0.1:${port}`, kind: 'hello', connections: 4, durationSeconds: 0.7, rampSeconds: 0.9 },
        { processes: [{ name: 'server', pid: process.pid }], onStarted: () => (started += 1) },
      );
      expect(started).toBe(1);
      expect(run.non2xx).toBe(0);
      expect(run.statusCodes).not.toHaveProperty('503');
      expect(run.ok).toBe(run.latency.count);
      expect(run.ok).toBeGreaterThan(0);
      expect(run.durationSeconds).toBeGreaterThan(0.5);
      expect(run.durationSeconds).toBeLessThan(1.5);
      expect(run.rps).toBeCloseTo(run.ok / run.durationSeconds, 5);
      expect(run.ramp?.seconds).toBe(0.9);
      expect(run.ramp?.answers).toBeGreaterThan(0);
      expect(run.ramp?.fromStart.count).toBe(run.ramp!.answers + run.latency.count);
      expect(run.sent).toBeGreaterThan(run.ok);
      expect(Object.keys(run.cpu)).toEqual(expect.arrayContaining(['server', 'driver']));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }, 30_000);
});

