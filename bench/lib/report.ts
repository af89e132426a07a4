/**
 * The result of a harness run as one JSON document, and its readable form: markdown tables. Pure
 * (data in, text out), so `test/bench/report.test.ts` can check it.
 */
import type { BootRow } from '../boot.js';
import { UP_TARGETS, type UpScaleResult } from '../up-scale.js';
import type { UnlockResult } from '../unlock.js';
import { checkTargets, CPU_RATIO_TARGET, P99_RATIO_TARGET } from '../unlock.js';
import type { SoakResult } from '../soak.js';
import type { ProfileResult } from '../profile.js';
import type { TlsResult } from '../tls.js';
import type { ResetResult } from '../reset.js';
import { JUDGE_CPU_TARGET, type JudgeResult } from '../judge.js';
import { renderJudgeCost, type JudgeCostResult } from '../judge-cost.js';
import type { ProfileSummary } from './cpu-profile.js';
import type { BenchOptions } from './args.js';
import type { RunHeader } from './machine.js';

export interface BenchResult {
  header: RunHeader & {
    options: Omit<BenchOptions, 'help' | 'out'>;
    /** Wall time of the whole harness run, seconds. */
    totalSeconds?: number;
    /** The commit at the end, when it differs from `commit`: the code changed under the run (children load src/ when they start). */
    commitAtEnd?: string;
    loadAverageAtEnd?: number[];
  };
  boot?: BootRow[];
  up?: UpScaleResult;
  unlock?: UnlockResult;
  judge?: JudgeResult;
  judgeCost?: JudgeCostResult;
  mosquitto?: { boot: BootRow[]; unlock: UnlockResult };
  tls?: TlsResult;
  soak?: SoakResult;
  profile?: ProfileResult;
  reset?: ResetResult;
  /** Parts that failed as a whole, one line each. */
  errors: string[];
}

/** 1234567 → "1,234,567". */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Milliseconds for people: "0.87 ms", "43 ms", "5.82 s", "1 min 55 s". */
export function formatMs(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** MiB for people: "575 MiB", "3.6 GiB". */
export function formatMiB(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return value >= 1024 ? `${(value / 1024).toFixed(1)} GiB` : `${Math.round(value)} MiB`;
}

function formatMicros(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '–' : `${Math.round(value)} µs`;
}

/** Cores for people: 0.85 → "0.85 cores". */
function formatCores(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(2)} cores`;
}

function formatKiB(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(1)} KiB`;
}

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

export function renderHeader(header: BenchResult['header']): string {
  const { machine } = header;
  const commit = header.commit ? `${header.commit.slice(0, 10)}${header.dirty ? ' (with uncommitted changes)' : ''}` : 'unknown';
  const options = header.options;
  return [
    `# station-sim benchmarks, ${header.date}`,
    '',
    `- Machine: ${machine.cpuModel} × ${machine.cpus}, ${machine.memoryGiB} GiB, ${machine.os}; open files per process ${machine.openFilesLimit ?? 'unknown'}`,
    `- Node ${machine.node}; mqtt ${machine.packages.mqtt ?? '?'}, aedes ${machine.packages.aedes ?? '?'}, fastify ${machine.packages.fastify ?? '?'}, autocannon ${machine.packages.autocannon ?? '?'}; Mosquitto ${machine.mosquitto ?? 'not found'}`,
    `- Commit ${commit}${header.commitAtEnd ? `; at the end ${header.commitAtEnd.slice(0, 10)}: the code changed during the run` : ''}`,
    `- Load average at start ${header.loadAverageAtStart.join(' / ')}${header.loadAverageAtEnd ? `, at end ${header.loadAverageAtEnd.join(' / ')}` : ''}${header.totalSeconds === undefined ? '' : `; whole run ${formatMs(header.totalSeconds * 1000)}`}`,
    `- Each figure is the median of ${options.runs} run${options.runs === 1 ? '' : 's'} (fleets of 100,000: ${options.bigRuns})${options.quick ? '; quick run' : ''}; loads of ${options.durationSeconds} s after ${options.warmupSeconds} s of warm-up${options.rampSeconds ? `, each measured after a ramp of ${options.rampSeconds} s on its own connections` : ''}`,
    `- Product: ${options.source ? 'src/ under tsx (`--source`: heavier and slower than what users run, bench/lib/product.ts)' : 'the compiled dist/, as the station-sim command runs it (built at the start of the run)'}`,
    ...(options.brokerAuth ? ['- Embedded broker with authentication and ACL checks on (`--broker-auth`: the bench fixtures have `mqtt.broker.auth: true`)'] : []),
  ].join('\n');
}

export function renderBoot(rows: BootRow[]): string {
  const head = ['broker', 'clients', 'N', 'all online', 'peak RSS', 'KiB / client', 'broker peak RSS', 'broker KiB / session', 'stop', 'runs'];
  const body = rows.map((row) => {
    const what = row.kind === 'stations' ? `stations (${row.locks} locks)` : 'raw mqtt.js';
    const cells = [row.broker, what, formatCount(row.count)];
    if (row.skipped) return [...cells, `skipped: ${row.skipped}`, '', '', '', '', '', '0'];
    const m = row.median;
    const runs = `${row.runs.length}${row.failures.length > 0 ? ` (+${row.failures.length} failed)` : ''}`;
    if (row.runs.length === 0) {
      const failure = row.failures[0];
      const progress = describeProgress(failure?.lastProgress);
      const why = failure ? `FAILED after ${formatMs(failure.elapsedMs)}${progress}: ${failure.error}` : 'not run';
      return [...cells, why, formatMiB(failure?.peakRssMiB), '', '', '', '', runs];
    }
    const broker = row.broker === 'embedded' ? ['(same process)', '(included)'] : [formatMiB(m.brokerPeakRssMiB), formatKiB(m.brokerKibPerClient)];
    return [...cells, formatMs(m.bootMs), formatMiB(m.peakRssMiB), formatKiB(m.kibPerClient), ...broker, formatMs(m.stopMs), runs];
  });
  const targets = bootTargets(rows);
  return targets ? `${table(head, body)}\n\n${targets}` : table(head, body);
}

/** Issue 25's memory target: at most 23 KiB per station at the largest size, and less than raw mqtt.js of the same run. */
export const STATION_KIB_TARGET = 23;

function bootTargets(rows: BootRow[]): string | undefined {
  const embedded = rows.filter((row) => row.broker === 'embedded' && row.runs.length > 0);
  const largest = Math.max(0, ...embedded.filter((row) => row.kind === 'stations').map((row) => row.count));
  const stations = embedded.find((row) => row.kind === 'stations' && row.count === largest)?.median.kibPerClient;
  if (stations === undefined) return undefined;
  const raw = embedded.find((row) => row.kind !== 'stations' && row.count === largest)?.median.kibPerClient;
  const verdict = (met: boolean): string => (met ? 'met' : 'missed');
  return (
    `Targets (embedded, ${formatCount(largest)} stations): ≤ ${STATION_KIB_TARGET} KiB per station: ${formatKiB(stations)}, ${verdict(stations <= STATION_KIB_TARGET)}; ` +
    `below raw mqtt.js of the same run: ${raw === undefined ? 'not measured' : `${formatKiB(stations)} against ${formatKiB(raw)}, ${verdict(stations < raw)}`}.`
  );
}

/** The `tls` part: PKI, boot against the raw baseline, reconnect storm, unlock over TLS against plain MQTT, and its targets line. */
export function renderTls(result: TlsResult): string {
  const out: string[] = [];
  const n = formatCount(result.stations);
  if (result.pki) {
    const { pki } = result;
    out.push(
      `Test PKI (\`generateTestPki\`, as \`station-sim certs\`) for ${formatCount(pki.stations)} stations in \`${pki.dir}\`: ${formatMs(pki.ms)} (${formatCount(pki.issued)} certificates issued, ${formatCount(pki.kept)} kept${pki.reused ? ': reused, every certificate checked' : ''}); not part of boot.`,
    );
  }
  const bootHead = ['clients', 'N', 'all online', 'peak RSS', 'KiB / client', 'Mosquitto peak RSS', 'Mosquitto KiB / session', 'stop', 'runs'];
  const bootBody = result.boot.map((row) => {
    const what = row.kind === 'stations' ? `stations (${result.locks} locks), lean client, own certificate each` : 'raw mqtt.js, station i’s certificate';
    const runs = `${row.runs.length}${row.failures.length > 0 ? ` (+${row.failures.length} failed)` : ''}`;
    if (row.runs.length === 0) {
      const failure = row.failures[0];
      return [what, formatCount(row.count), failure ? `FAILED after ${formatMs(failure.elapsedMs)}${describeProgress(failure.lastProgress)}: ${failure.error}` : 'not run', '', '', '', '', '', runs];
    }
    const m = row.median;
    return [what, formatCount(row.count), formatMs(m.bootMs), formatMiB(m.peakRssMiB), formatKiB(m.kibPerClient), formatMiB(m.brokerPeakRssMiB), formatKiB(m.brokerKibPerClient), formatMs(m.stopMs), runs];
  });
  out.push('### Boot over TLS (certificate listener)', table(bootHead, bootBody));
  const storm = result.stormMedian;
  if (result.storm.length > 0) {
    const back = result.storm.filter((run) => run.allBack).length;
    out.push(
      '### Reconnect storm: Mosquitto killed and restarted under the fleet',
      table(
        ['stations', 'all back after the kill', 'after the restart', 'restart (kill → ports open)', 'fewest online', 'peak reconnects / s', 'mean reconnects / s', 'runs all back'],
        [[n, formatMs(storm.killToAllBackMs), formatMs(storm.restartToAllBackMs), formatMs(storm.restartMs), formatCount(storm.lowestOnline ?? Number.NaN), formatCount(storm.peakPerSecond ?? Number.NaN), formatCount(storm.meanPerSecond ?? Number.NaN), `${back} of ${result.storm.length}`]],
      ),
    );
  }
  for (const failure of result.stormFailures) out.push(`- storm not measured: ${failure}`);
  const u = result.unlockMedian;
  if (result.unlock.length > 0) {
    const count = (pick: (run: TlsUnlockRunView) => { ok: number; requests: number }): string => {
      const ok = result.unlock.reduce((sum, run) => sum + pick(run).ok, 0);
      const requests = result.unlock.reduce((sum, run) => sum + pick(run).requests, 0);
      return `${formatCount(ok)} of ${formatCount(requests)}`;
    };
    out.push(
      `### Unlock round trip over TLS (one simulator process, ${formatCount(result.unlockStations)} stations, sequential unlocks through /v1)`,
      table(
        ['broker', 'p50', 'p99', 'successful'],
        [
          ['Mosquitto as docs/mosquitto/station-sim.conf ships it, TLS + client certificates', formatMs(u.tlsP50), formatMs(u.tlsP99), count((run) => run.tls)],
          ['the same + `set_tcp_nodelay true`', formatMs(u.noDelayP50), formatMs(u.noDelayP99), count((run) => run.tlsNoDelay)],
          ['Mosquitto, open, plain TCP (`set_tcp_nodelay true`)', formatMs(u.plainP50), formatMs(u.plainP99), count((run) => run.plain)],
          ['ratio TLS as shipped ÷ plain', fixed(u.p50Ratio), fixed(u.p99Ratio), ''],
          ['ratio TLS + nodelay ÷ plain', fixed(u.noDelayP50Ratio), fixed(u.noDelayP99Ratio), ''],
        ],
      ),
    );
  }
  for (const failure of result.unlockFailures) out.push(`- ${failure}`);
  const ratio = result.bootRatio;
  const targets = [
    `boot of ${n} stations over TLS within 2× of raw mqtt.js over TLS: ${ratio === undefined ? 'not measured' : `${ratio.toFixed(2)}× (${ratio <= 2 ? 'met' : 'NOT met'})`}`,
    `unlock over TLS: p50 ${formatMs(u.tlsP50)}, p99 ${formatMs(u.tlsP99)} (${fixed(u.p99Ratio)}× plain MQTT's p99; with set_tcp_nodelay ${formatMs(u.noDelayP50)} / ${formatMs(u.noDelayP99)}, ${fixed(u.noDelayP99Ratio)}×)`,
    `reconnect storm: ${result.storm.length === 0 ? 'not measured' : `all ${n} back ${formatMs(storm.restartToAllBackMs)} after the restart, peak ${formatCount(storm.peakPerSecond ?? Number.NaN)}/s`}`,
  ];
  out.push(`**Targets:** ${targets.join('; ')}.`);
  return out.join('\n\n');
}

type TlsUnlockRunView = TlsResult['unlock'][number];

function fixed(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(2);
}

function describeProgress(progress: unknown): string {
  if (typeof progress !== 'object' || progress === null) return '';
  const { ready, total } = progress as { ready?: number; total?: number };
  return ready === undefined || total === undefined ? '' : ` (${formatCount(ready)} of ${formatCount(total)} up)`;
}

export function renderUnlock(result: UnlockResult): string {
  const head = [
    'broker',
    'connections',
    'unlock req/s',
    'p50',
    'p99',
    'p99 with the ramp',
    'in server p50 / p99',
    'errors',
    'hello req/s',
    'hello p50',
    'hello p99 (with the ramp)',
    'ratio',
    'API process CPU',
    'server CPU per unlock / per hello',
    'other load',
  ];
  const body = result.rows.map((row) => {
    const m = row.median;
    const errors = row.runs.reduce((sum, run) => sum + run.unlockErrors, 0);
    return [
      row.broker,
      String(row.connections),
      m.unlockRps === undefined ? '–' : formatCount(m.unlockRps),
      formatMs(m.unlockP50),
      formatMs(m.unlockP99),
      formatMs(m.unlockP99FromStart),
      `${formatMs(m.serverP50)} / ${formatMs(m.serverP99)}`,
      `${errors}${row.runs.length > 1 ? ` in ${row.runs.length} runs` : ''}`,
      m.helloRps === undefined ? '–' : formatCount(m.helloRps),
      formatMs(m.helloP50),
      `${formatMs(m.helloP99)} (${formatMs(m.helloP99FromStart)})`,
      m.ratio === undefined ? '–' : m.ratio.toFixed(3),
      formatCores(m.apiCpu),
      `${formatMicros(m.unlockCpuUs)} / ${formatMicros(m.helloCpuUs)}`,
      formatCores(m.otherCpu),
    ];
  });
  const targets = checkTargets(result.rows);
  const at = (connections: number) => result.rows.find((row) => row.connections === connections)?.median;
  const verdict = (met: boolean | undefined, shown: string): string => (met === undefined ? 'not measured' : `${shown}, ${met ? 'met' : 'missed'}`);
  const sampled = result.samples.reduce((sum, sample) => sum + sample.requests, 0);
  const sampledOk = result.samples.reduce((sum, sample) => sum + sample.ok, 0);
  const lines = [
    table(head, body),
    '',
    `Targets (${result.rows[0]?.broker ?? ''}): ratio ≥ 0.25 at 100 connections: ${verdict(targets.ratioAt100, at(100)?.ratio?.toFixed(3) ?? '')}; ` +
      `p99 ≤ ${P99_RATIO_TARGET}× hello p99 at 100: ${verdict(targets.p99At100, `${formatMs(at(100)?.unlockP99)} = ${p99Ratio(at(100))}× ${formatMs(at(100)?.helloP99)}`)} (with the ramp: ${formatMs(at(100)?.unlockP99FromStart)}); server CPU per unlock ≤ ${CPU_RATIO_TARGET}× hello's per request at 100: ${verdict(targets.cpuAt100, `${formatMicros(at(100)?.unlockCpuUs)} = ${cpuRatio(at(100))}× ${formatMicros(at(100)?.helloCpuUs)}`)}; p50 ≤ 2 ms at 1: ${verdict(targets.p50At1, formatMs(at(1)?.unlockP50))}. ` +
      `Bodies read one by one: ${sampledOk} of ${sampled} were {"success":true}. Fleet: ${formatCount(result.stations)} stations × ${result.locks} locks.`,
  ];
  for (const failure of result.failures) lines.push(`- FAILED: ${failure}`);
  return lines.join('\n');
}

/** Server CPU per unlock over the hello-world's per request, as the targets line shows it. */
function cpuRatio(figures: { unlockCpuUs?: number; helloCpuUs?: number } | undefined): string {
  if (figures?.unlockCpuUs === undefined || figures.helloCpuUs === undefined || figures.helloCpuUs <= 0) return '–';
  return (figures.unlockCpuUs / figures.helloCpuUs).toFixed(2);
}

/** The unlock p99 over the hello-world's p99 of the same run, as the targets line shows it. */
function p99Ratio(figures: { unlockP99?: number; helloP99?: number } | undefined): string {
  if (figures?.unlockP99 === undefined || figures.helloP99 === undefined || figures.helloP99 <= 0) return '–';
  return (figures.unlockP99 / figures.helloP99).toFixed(2);
}

export function renderSoak(soak: SoakResult): string {
  const head = ['length', 'rate', 'requests', 'ok', 'lost', 'non-2xx / body / errors', 'commands / acks at broker', 'RSS start → end (after GC)', 'heap start → end (after GC)', 'broker thread heap start → end (after GC)', 'p50 / p99'];
  const quiet = table(head, [
    [
      formatMs(soak.seconds * 1000),
      `${soak.rate}/s over ${soak.connections} conns`,
      formatCount(soak.requests),
      formatCount(soak.ok),
      formatCount(soak.lost),
      `${soak.non2xx} / ${soak.bodyFailures} / ${soak.errors}`,
      `${formatCount(soak.commandsAtBroker)} / ${formatCount(soak.acksAtBroker)}`,
      `${formatMiB(soak.rssStartMiB)} → ${formatMiB(soak.rssEndMiB)} (${formatMiB(soak.rssEndAfterGcMiB)})`,
      `${formatMiB(soak.heapStartMiB)} → ${formatMiB(soak.heapEndAfterGcMiB)}`,
      Number.isFinite(soak.brokerHeapStartMiB) ? `${formatMiB(soak.brokerHeapStartMiB)} → ${formatMiB(soak.brokerHeapEndAfterGcMiB)}` : '–',
      `${formatMs(soak.latency.p50)} / ${formatMs(soak.latency.p99)}`,
    ],
  ]);
  // Results stored before the login floods were added have none.
  const floods = soak.floods ?? [];
  if (floods.length === 0) return quiet;
  const floodHead = ['beside', 'unlocks ok', 'unlock p50 / p99', 'p99 ÷ quiet p99', 'flood answers', 'checked (401) p99', 'real logins (p99)', 'API CPU'];
  const rows = floods.map((phase) => [
    `${phase.floodRate} wrong logins/s from ${phase.addresses} address${phase.addresses === 1 ? '' : 'es'}, ${formatMs(phase.seconds * 1000)}`,
    `${formatCount(phase.unlock.ok)} / ${formatCount(phase.unlock.requests)}`,
    `${formatMs(phase.unlock.latency.p50)} / ${formatMs(phase.unlock.latency.p99)}`,
    `${phase.p99Ratio}`,
    Object.entries(phase.flood.statuses).map(([status, count]) => `${status} ×${formatCount(count)}`).join(', ') + (phase.flood.skipped > 0 ? `, skipped ×${phase.flood.skipped}` : ''),
    formatMs(phase.flood.checkedLatency.p99),
    `${Object.entries(phase.realLogins.statuses).map(([status, count]) => `${status} ×${count}`).join(', ')} (${formatMs(phase.realLogins.latency.p99)})`,
    Object.entries(phase.cpu).filter(([name]) => name !== 'driver' && name !== 'others').map(([, value]) => value.toFixed(2)).join(' + '),
  ]);
  return [quiet, '', 'The same unlock load beside a flood of wrong logins (quiet p99: the soak above):', '', table(floodHead, rows)].join('\n');
}

export function renderProfile(profile: ProfileResult, top = 15): string {
  const lines = [
    `${profile.broker} broker, ${profile.connections} connections, ${profile.seconds} s: ${formatCount(profile.load.rps)} unlocks/s while profiled; ` +
      `CPU in cores: ${Object.entries(profile.load.cpu).map(([name, value]) => `${name} ${value.toFixed(2)}`).join(', ')}.`,
    '',
    '### Main thread (HTTP, gateway, stations, control plane)',
    '',
    renderThread(profile, top, true),
  ];
  for (const thread of profile.threads ?? []) {
    lines.push('', `### Thread "${thread.title}" (shares of that thread's own samples)`, '', renderThread(thread, top, false));
  }
  return lines.join('\n');
}

function renderThread(profile: ProfileSummary, top: number, withProject: boolean): string {
  const owners = table(
    ['package / part', 'self time', 'share'],
    profile.owners.slice(0, 12).map((owner) => [owner.owner, formatMs(owner.selfMs), `${owner.percent} %`]),
  );
  const actors = table(
    ['part of the simulator (innermost on the stack)', 'self time', 'share'],
    (profile.actors ?? []).map((entry) => [entry.actor, formatMs(entry.selfMs), `${entry.percent} %`]),
  );
  const functions = table(
    ['function', 'where', 'self time', 'share'],
    profile.functions.slice(0, top).map((entry) => [entry.name, entry.where || entry.owner, formatMs(entry.selfMs), `${entry.percent} %`]),
  );
  const project = table(
    ['station-sim function (inclusive)', 'where', 'time', 'share'],
    profile.project.slice(0, 12).map((entry) => [entry.name, entry.where, formatMs(entry.totalMs), `${entry.percent} %`]),
  );
  return [owners, '', actors, '', functions, ...(withProject ? ['', project] : [])].join('\n');
}

/** The `up` part: the command users run against the bench's fleet boot of the same size, and its targets line. */
export function renderUpScale(result: UpScaleResult): string {
  const boot = result.boot?.runs[0];
  const up = result.up;
  const n = `${formatCount(result.stations)} × ${result.locks}`;
  const rows = [
    ['fleet boot (bench, `startSimulator({ http: false })`)', n, boot ? formatMs(boot.bootMs) : 'FAILED', boot ? formatMiB(boot.peakRssMiB) : '', '', ''],
    ['`station-sim up` (ci fixture, compiled CLI)', n, up ? formatMs(up.readyMs) : 'FAILED', up ? formatMiB(up.peakRssMiB) : '', up ? `${up.readP50Ms} / ${up.readP99Ms} ms` : '', up ? `${up.healthP50Ms} / ${up.healthP99Ms} ms` : ''],
  ];
  const lines = [table(['what', 'stations', 'ready', 'peak RSS', 'idle station read p50 / p99', 'health p50 / p99'], rows), ''];
  if (up && boot) {
    const ready = up.readyMs / boot.bootMs;
    const rss = up.peakRssMiB / boot.peakRssMiB;
    const verdict = (met: boolean): string => (met ? 'met' : 'missed');
    lines.push(
      `Targets: ready ≤ ${UP_TARGETS.readyRatio}× the boot: ${ready.toFixed(2)}×, ${verdict(ready <= UP_TARGETS.readyRatio)}; ` +
        `peak RSS ≤ ${UP_TARGETS.rssRatio}× the boot's: ${rss.toFixed(2)}×, ${verdict(rss <= UP_TARGETS.rssRatio)}; ` +
        `idle station read p99 ≤ ${UP_TARGETS.readP99Ms} ms: ${up.readP99Ms} ms, ${verdict(up.readP99Ms <= UP_TARGETS.readP99Ms)}. ` +
        `up's ready time counts from the command's start (process start and fixture included); the boot's from \`startSimulator\`.`,
    );
  }
  for (const notice of up?.notices ?? []) lines.push(`- up said: ${notice}`);
  for (const failure of result.failures) lines.push(`- FAILED: ${failure}`);
  return lines.join('\n');
}

/** The whole result as markdown. */
export function renderMarkdown(result: BenchResult): string {
  const sections = [renderHeader(result.header)];
  const boot = [...(result.boot ?? []), ...(result.mosquitto?.boot ?? [])];
  if (boot.length > 0) sections.push('## Fleet boot', renderBoot(boot));
  if (result.up) sections.push('## `station-sim up` at scale, beside a fleet boot of the same size', renderUpScale(result.up));
  if (result.unlock) sections.push('## Unlock round trip, embedded broker', renderUnlock(result.unlock));
  if (result.judge) sections.push('## The judge on and off (server CPU per unlock, same run)', renderJudge(result.judge));
  if (result.judgeCost) sections.push('## The judge\'s cost, fresh process pairs per round with an A/A control', renderJudgeCost(result.judgeCost));
  if (result.mosquitto) sections.push('## Unlock round trip, Mosquitto (stations and API in their own processes)', renderUnlock(result.mosquitto.unlock));
  if (result.tls) sections.push('## TLS with per-station certificates, Mosquitto configured as production', renderTls(result.tls));
  if (result.soak) sections.push('## Soak', renderSoak(result.soak));
  if (result.profile) sections.push('## Where the unlock time goes (CPU profile of the API process, each thread)', renderProfile(result.profile));
  if (result.reset) sections.push('## Reset between tests (`POST /sim/v1/reset`)', renderReset(result.reset));
  if (result.errors.length > 0) sections.push('## Errors', result.errors.map((error) => `- ${error}`).join('\n'));
  return `${sections.join('\n\n')}\n`;
}

/** The reset part: each fleet's reset, untouched and after one change, as ms and as a ratio to a health round trip. */
export function renderReset(result: ResetResult): string {
  const lines = [
    '| fixture | reset | × health | reset after one change | × health | health round trip | samples |',
    '|---|---|---|---|---|---|---|',
    ...result.rows.map((row) => `| ${row.fixture} | ${formatMs(row.resetMs)} | ${row.resetRatio} | ${formatMs(row.touchedResetMs)} | ${row.touchedResetRatio} | ${formatMs(row.healthMs)} | ${row.samples} |`),
  ];
  return lines.join('\n');
}

/** The judge part: each round's CPU per unlock with the judge on and off, the medians, and the target. */
export function renderJudge(result: JudgeResult): string {
  const lines = [
    `${formatCount(result.stations)} stations × ${result.locks} locks, embedded broker, ${result.rate} unlocks/s over ${result.connections} connections for ${result.durationSeconds} s each; rounds alternate which runs first.` +
      (result.aaControl ? ' **A/A control (`--judge-aa`): the "off" simulator has its judge on too; the ratio measures the harness, not the judge.**' : ''),
    '',
    '| round | first | judge on µs / unlock | req/s | judge off µs / unlock | req/s | on ÷ off | errors on / off | other load on / off |',
    '|---|---|---|---|---|---|---|---|---|',
    ...result.rounds.map(
      (r, index) =>
        `| ${index + 1} | ${r.first} | ${r.on.cpuUs} | ${formatCount(r.on.rps)} | ${r.off.cpuUs} | ${formatCount(r.off.rps)} | ${fixed(r.on.cpuUs / r.off.cpuUs)} | ${r.on.errors} / ${r.off.errors} | ${r.on.otherCpu} / ${r.off.otherCpu} |`,
    ),
    `| **median** | | **${result.onCpuUs}** | ${formatCount(result.onRps)} | **${result.offCpuUs}** | ${formatCount(result.offRps)} | **${fixed(result.ratio)}** | | |`,
  ];
  for (const failure of result.failures) lines.push('', `- ${failure}`);
  const met = Number.isFinite(result.ratio) ? (result.ratio <= JUDGE_CPU_TARGET ? 'met' : 'NOT met') : 'not measured';
  lines.push(
    '',
    `**Targets:** server CPU per unlock with the judge on ≤ ${JUDGE_CPU_TARGET.toFixed(2)}× off: ${fixed(result.ratio)}× (${met}; pooled over the rounds ${fixed(result.pooledRatio)}×); ` +
      `the judge alone (\`ServiceJudge.observe\`, in the harness): ${result.observeUs} µs per command = ${fixed(result.observeShare * 100)} % of the judge-off CPU per unlock; ` +
      `findings of the judge on station-sim's own gateway: ${Number.isFinite(result.findings) ? result.findings : 'not read'} (target 0).`,
  );
  return lines.join('\n');
}
