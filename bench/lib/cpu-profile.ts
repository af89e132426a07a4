/**
 * Reads a V8 `.cpuprofile` (what `node --cpu-prof` writes) and says where the time went: self time
 * per function and per package. Pure apart from `readCpuProfile`, for tests.
 */
import { readFileSync } from 'node:fs';

/** The parts of the `.cpuprofile` format (Chrome DevTools protocol `Profiler.Profile`) used here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  startTime: number;
  endTime: number;
  /** Node id of each sample. */
  samples: number[];
  /** Microseconds since the previous sample, one per sample. */
  timeDeltas: number[];
}

export interface SelfTime {
  /** Function name, or `(anonymous)`; V8's own entries look like `(garbage collector)`. */
  name: string;
  /** `package-or-dir/file:line` of the function. */
  where: string;
  /** Which package (or part of this project) it belongs to. */
  owner: string;
  selfMs: number;
  /** Share of all sampled time, %. */
  percent: number;
}

export interface ProfileSummary {
  totalMs: number;
  functions: SelfTime[];
  owners: { owner: string; selfMs: number; percent: number }[];
  /**
   * This project's own functions (`src/`) by inclusive time: every sample with the function
   * anywhere on its stack. Shows which step of the unlock path the library time is spent under.
   */
  project: { name: string; where: string; totalMs: number; percent: number }[];
  /**
   * Self time by the part of the simulator it was spent for (`actorOf`): each sample goes to the
   * innermost frame on its stack that belongs to a part, so library code (mqtt-packet, streams)
   * counts for whoever called it.
   */
  actors: { actor: string; selfMs: number; percent: number }[];
}

export interface SummarizeOptions {
  /** Functions kept in `functions` and `project`. @default 25 */
  top?: number;
  /** Samples with a frame from a script matching this are left out (e.g. the profiler's own stop call). */
  excludeUrl?: RegExp;
}

export function readCpuProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

/**
 * Who owns a script URL: an npm package (`fastify`, `@fastify/…`), a part of this project
 * (`station-sim src/service`), Node itself (`node:internal`), or V8 (`(program)`, `(garbage collector)`).
 */
export function ownerOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node (built-in)';
  const path = decodeURIComponent(url.replace(/^file:\/\//, ''));
  const modules = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (modules) return modules[1]!;
  const project = /\/(src|bench)\/([^/]+)\//.exec(path);
  if (project) return `station-sim ${project[1]}/${project[2]}`;
  return path;
}

/**
 * The part of the simulator a frame works for, or undefined for code that serves anyone (streams,
 * timers, mqtt-packet, the event loop). Rules are tried in order.
 */
const ACTORS: [RegExp, string][] = [
  [/\/src\/service\/(station-gateway\.ts|gateway\/)/, 'API gateway (MQTT side of /v1)'],
  [/\/src\/(station\/|mqtt\/station-client\.ts|fleet\/)/, 'stations (model and MQTT binding)'],
  [/\/src\/broker\/(broker-thread|broker-worker|thread-protocol)\.ts/, 'link between threads (batches)'],
  [/\/node_modules\/(aedes|aedes-packet|aedes-persistence|mqemitter|qlobber)\/|\/src\/broker\//, 'broker (aedes)'],
  [/\/src\/(control|transcript)\//, 'control plane and event hub'],
  [/\/src\/mqtt\/(lean-client|packet-codec)\.ts/, 'lean MQTT client (framing, codec)'],
  [/\/src\/service\/|\/node_modules\/(fastify|find-my-way|@fastify\/[^/]+|light-my-request)\/|^node:_http/, 'HTTP (fastify, auth, routes)'],
];

export function actorOf(url: string): string | undefined {
  for (const [pattern, actor] of ACTORS) if (pattern.test(url)) return actor;
  return undefined;
}

/**
 * A frame of the compiled product (`dist/x.js`, what the bench runs by default) as the source file
 * it was built from (`src/x.ts`), so owners, parts and the project's functions read the same either way.
 */
export function asSource(url: string): string {
  if (url.includes('/node_modules/')) return url;
  return url.replace(/\/dist\/(.*)\.js$/, '/src/$1.ts');
}

/** Self time by function and by owner, and inclusive time of the project's functions, largest first. */
export function summarizeProfile(profile: CpuProfile, options: SummarizeOptions = {}): ProfileSummary {
  const top = options.top ?? 25;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const stackOf = (id: number): number[] => {
    const stack: number[] = [];
    for (let current: number | undefined = id; current !== undefined; current = parents.get(current)) stack.push(current);
    return stack;
  };
  const excluded = (id: number): boolean =>
    options.excludeUrl !== undefined && stackOf(id).some((frame) => options.excludeUrl!.test(nodes.get(frame)?.callFrame.url ?? ''));

  const selfMicros = new Map<number, number>();
  const actorMicros = new Map<string, number>();
  const inclusiveMicros = new Map<string, { name: string; where: string; micros: number }>();
  for (const node of profile.nodes) node.callFrame.url = asSource(node.callFrame.url);
  profile.samples.forEach((id, index) => {
    if (excluded(id)) return;
    const micros = profile.timeDeltas[index] ?? 0;
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + micros);
    const leaf = nodes.get(id)?.callFrame;
    let actor = leaf && leaf.url === '' && leaf.functionName.startsWith('(') ? leaf.functionName : undefined;
    for (const frame of actor ? [] : stackOf(id)) {
      actor = actorOf(nodes.get(frame)?.callFrame.url ?? '');
      if (actor) break; // the stack runs from the leaf: the first part found is the innermost
    }
    actor ??= 'other (streams, timers, event loop)';
    actorMicros.set(actor, (actorMicros.get(actor) ?? 0) + micros);
    const seen = new Set<string>();
    for (const frame of stackOf(id)) {
      const callFrame = nodes.get(frame)?.callFrame;
      if (!callFrame || !/\/src\//.test(callFrame.url) || callFrame.url.includes('/node_modules/')) continue;
      const name = callFrame.functionName || '(anonymous)';
      const where = shortPath(callFrame.url);
      const key = `${name} ${where}`;
      if (seen.has(key)) continue; // recursion: count the sample once
      seen.add(key);
      const entry = inclusiveMicros.get(key) ?? { name, where, micros: 0 };
      entry.micros += micros;
      inclusiveMicros.set(key, entry);
    }
  });
  const byFunction = new Map<string, SelfTime>();
  const byOwner = new Map<string, number>();
  let totalMicros = 0;
  for (const node of profile.nodes) {
    const micros = selfMicros.get(node.id) ?? 0;
    if (micros === 0) continue;
    totalMicros += micros;
    const { functionName, url, lineNumber } = node.callFrame;
    const owner = ownerOf(url, functionName);
    // Scripts compiled on the fly (tsx) report line 0 for everything; the file alone says more then.
    const where = url === '' ? '' : lineNumber > 0 ? `${shortPath(url)}:${lineNumber + 1}` : shortPath(url);
    const name = functionName || '(anonymous)';
    const key = `${name} ${where}`;
    const entry = byFunction.get(key) ?? { name, where, owner, selfMs: 0, percent: 0 };
    entry.selfMs += micros / 1000;
    byFunction.set(key, entry);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + micros / 1000);
  }
  const totalMs = totalMicros / 1000;
  const share = (ms: number): number => Math.round((ms / totalMs) * 1000) / 10;
  const functions = [...byFunction.values()]
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, top)
    .map((entry) => ({ ...entry, selfMs: Math.round(entry.selfMs), percent: share(entry.selfMs) }));
  const owners = [...byOwner.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([owner, ms]) => ({ owner, selfMs: Math.round(ms), percent: share(ms) }));
  const project = [...inclusiveMicros.values()]
    .sort((a, b) => b.micros - a.micros)
    .slice(0, top)
    .map((entry) => ({ name: entry.name, where: entry.where, totalMs: Math.round(entry.micros / 1000), percent: share(entry.micros / 1000) }));
  const actors = [...actorMicros.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([actor, micros]) => ({ actor, selfMs: Math.round(micros / 1000), percent: share(micros / 1000) }));
  return { totalMs: Math.round(totalMs), functions, owners, project, actors };
}

/** The path from `node_modules/…` or the project's `src/`, so lines stay short. */
function shortPath(url: string): string {
  const path = decodeURIComponent(url.replace(/^file:\/\//, ''));
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) return path.slice(modules + '/node_modules/'.length);
  const project = /\/((?:src|bench)\/.*)$/.exec(path);
  return project ? project[1]! : path;
}
