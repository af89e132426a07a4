/**
 * The shape of src/ (docs/architecture.md): no import cycle between files or between folders, and
 * no folder importing one that the layering puts above it. Every import is read, type-only ones
 * included (a type-only loop is still a loop for the reader): `import … from`, `export … from`,
 * bare `import '…'`, `import('…')` and `import('…')` types.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layers, top to bottom. A room (a folder of src/, or a file at its root) may import any room
 * of a layer below its own. Rooms of one layer do not import each other, save the exceptions
 * below; none imports a layer above.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['index.ts'], // the package's entry: re-exports the parts
  ['cli', 'testing'], // the ways in: the command line, and the helpers for test suites
  ['simulator'], // startSimulator: the parts put together
  ['transcript', 'demo'], // recording and reading what a simulator did; the narrated demo's story and its player
  ['service', 'control', 'fleet', 'dashboard', 'client'], // the parts: /v1, /sim/v1, stations on MQTT, the terminal UI, the /v1 and /sim/v1 clients
  ['judge'], // the rules the code under test is judged by, used by the parts that see it (fleet, control)
  ['broker', 'mqtt'], // the embedded broker; the topic contract and the MQTT clients
  ['station', 'certs'], // the pure firmware model; the test PKI of `station-sim certs`
  ['fixture'], // the schemas of what a simulation can be told, and the loader
  ['contract'], // the MQTT contract: topic templates, payloads, states, actions, fault kinds, the simulator's own topics
  ['shared'], // mechanisms with no domain: clock, listening, streams, URLs
  ['errors.ts'], // the one error catalogue
];

/** Imports between rooms of one layer that are allowed, each for a reason; `to` is a room or a file. */
const SIDEWAYS: readonly { from: string; to: string; typeOnly?: true; reason: string }[] = [
  {
    from: 'control',
    to: 'service/build-api.ts',
    typeOnly: true,
    reason: "the control plane is mounted on the API's fastify instance: one HTTP port for /v1 and /sim/v1",
  },
  { from: 'control', to: 'service/http/bearer-token.ts', reason: '/sim/v1 reads its bearer token exactly as /v1 does' },
  {
    from: 'control',
    to: 'service/http/route-target.ts',
    reason: 'the event stream tells the station and lock a /v1 request names by the same rule as the judge of the client, so no credential pasted into a path reaches either',
  },
  {
    from: 'control',
    to: 'service/http/route-docs.ts',
    reason: '/sim/v1 is in the same OpenAPI document as /v1: its routes document their errors with the same Error component and descriptions',
  },
  {
    from: 'fleet',
    to: 'control/control-protocol.ts',
    reason: 'the fleet agent is the far end of the control channel, whose protocol the control plane defines',
  },
  {
    from: 'client',
    to: 'service/http/api-schemas.ts',
    typeOnly: true,
    reason: 'the reference client takes the /v1 wire types from the schemas the API validates with, so the two cannot drift',
  },
  {
    from: 'client',
    to: 'control/wire-schemas.ts',
    typeOnly: true,
    reason: 'the control client takes the /sim/v1 wire types from the schemas the control plane validates and serialises with, so the two cannot drift',
  },
  {
    from: 'dashboard',
    to: 'client',
    reason: 'the dashboard drives the simulator through the typed control client that test suites use',
  },
  {
    from: 'broker',
    to: 'mqtt/broker-link.ts',
    typeOnly: true,
    reason: 'the broker implements the link interfaces the lean client attaches through',
  },
];

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

interface ImportRef {
  specifier: string;
  typeOnly: boolean;
}

/** Every module specifier `source` refers to, with whether the reference is for types only. */
function importsOf(source: string, fileName = 'module.ts'): ImportRef[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: ImportRef[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly)));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const typeOnly = node.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((element) => element.isTypeOnly));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteralLike(argument)) found.push({ specifier: argument.text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** A file of src/ as `folder/file.ts`, with forward slashes. */
const rel = (path: string): string => relative(SRC, path).split(sep).join('/');

/** The room of a file: its folder under src/, or the file itself at the root. */
const roomOf = (file: string): string => file.split('/')[0]!;

/** Where a relative specifier points, as a file of src/; undefined outside src/. Throws when there is no such file. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(SRC, dirname(from), specifier);
  const stem = base.replace(/\.(js|jsx|mjs)$/, '');
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts')];
  const target = candidates.find((candidate) => {
    try {
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
  if (target === undefined) throw new Error(`src/${from} imports "${specifier}", which is no file`);
  const path = rel(target);
  return path.startsWith('..') ? undefined : path;
}

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function readGraph(): Edge[] {
  const edges: Edge[] = [];
  for (const path of sourceFiles(SRC)) {
    const from = rel(path);
    for (const ref of importsOf(readFileSync(path, 'utf8'), path)) {
      if (!ref.specifier.startsWith('.')) continue;
      const to = resolveSpecifier(from, ref.specifier);
      if (to !== undefined) edges.push({ from, to, typeOnly: ref.typeOnly });
    }
  }
  return edges;
}

/** The cycles of `graph`, one per strongly connected component, each as a path back to its start. */
function findCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const nodes = new Set<string>([...graph.keys(), ...[...graph.values()].flatMap((targets) => [...targets])]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const connect = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) components.push(component);
    }
  };
  for (const node of [...nodes].sort()) if (!index.has(node)) connect(node);
  // One concrete loop per component, found breadth first so it is a shortest one through its first member.
  return components.map((component) => {
    const members = new Set(component);
    const start = [...component].sort()[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const node = queue.shift()!;
      for (const target of graph.get(node) ?? []) {
        if (!members.has(target)) continue;
        if (target === start) {
          const path = [start];
          for (let at = node; at !== start; at = previous.get(at)!) path.splice(1, 0, at);
          return [...path, start];
        }
        if (!previous.has(target)) {
          previous.set(target, node);
          queue.push(target);
        }
      }
    }
    return [start, start];
  });
}

function graphOf(pairs: Iterable<[string, string]>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [from, to] of pairs) {
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from)!.add(to);
  }
  return graph;
}

const layerOf = new Map(LAYERS.flatMap((rooms, layer) => rooms.map((room) => [room, layer] as const)));

const edges = readGraph();
const crossing = edges.filter((edge) => roomOf(edge.from) !== roomOf(edge.to));
/** One import that makes each folder edge, to name in messages. */
const example = new Map<string, Edge>();
for (const edge of crossing) {
  const key = `${roomOf(edge.from)} -> ${roomOf(edge.to)}`;
  if (!example.has(key)) example.set(key, edge);
}

function sidewaysRule(edge: Edge): (typeof SIDEWAYS)[number] | undefined {
  return SIDEWAYS.find((rule) => rule.from === roomOf(edge.from) && (rule.to === roomOf(edge.to) || rule.to === edge.to || edge.to.startsWith(`${rule.to}/`)));
}

describe('the import graph of src/', () => {
  it('reads every kind of import, type-only and dynamic ones included', () => {
    const refs = importsOf(`
      import a from './a.js';
      import type { B } from './b.js';
      import { type C1, type C2 } from './c.js';
      import { D, type D2 } from './d.js';
      import './e.js';
      export { F } from './f.js';
      export type { G } from './g.js';
      export * from './h.js';
      const i = await import('./i.js');
      type J = typeof import('./j.js');
    `);
    expect(refs).toEqual([
      { specifier: './a.js', typeOnly: false },
      { specifier: './b.js', typeOnly: true },
      { specifier: './c.js', typeOnly: true },
      { specifier: './d.js', typeOnly: false },
      { specifier: './e.js', typeOnly: false },
      { specifier: './f.js', typeOnly: false },
      { specifier: './g.js', typeOnly: true },
      { specifier: './h.js', typeOnly: false },
      { specifier: './i.js', typeOnly: false },
      { specifier: './j.js', typeOnly: true },
    ]);
    expect(findCycles(graphOf([['a', 'b'], ['b', 'c'], ['c', 'a'], ['c', 'd']]))).toEqual([['a', 'b', 'c', 'a']]);
    // The real graph is read: a known type-only edge is there.
    expect(edges).toContainEqual({ from: 'broker/broker-thread.ts', to: 'mqtt/broker-link.ts', typeOnly: true });
  });

  it('has no import cycle between files', () => {
    const cycles = findCycles(graphOf(edges.map((edge) => [edge.from, edge.to])));
    expect(cycles.map((cycle) => `file cycle: ${cycle.join(' -> ')}`)).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    const cycles = findCycles(graphOf(crossing.map((edge) => [roomOf(edge.from), roomOf(edge.to)])));
    const described = cycles.map((cycle) => {
      const steps = cycle.slice(1).map((to, i) => {
        const edge = example.get(`${cycle[i]} -> ${to}`)!;
        return `  ${cycle[i]} -> ${to} (src/${edge.from} imports src/${edge.to})`;
      });
      return `folder cycle: ${cycle.join(' -> ')}\n${steps.join('\n')}`;
    });
    expect(described).toEqual([]);
  });

  it('puts every folder of src/ in a layer', () => {
    const rooms = new Set(edges.flatMap((edge) => [roomOf(edge.from), roomOf(edge.to)]));
    const unplaced = [...rooms].filter((room) => !layerOf.has(room));
    expect(unplaced.map((room) => `src/${room} is in no layer: add it to LAYERS in this test and to docs/architecture.md`)).toEqual([]);
  });

  it('has each folder import only the layers below it, save the listed exceptions', () => {
    const wrong: string[] = [];
    for (const edge of crossing) {
      const from = layerOf.get(roomOf(edge.from));
      const to = layerOf.get(roomOf(edge.to));
      if (from === undefined || to === undefined || from < to) continue;
      const where = `src/${edge.from} imports src/${edge.to}${edge.typeOnly ? ' (types only)' : ''}`;
      if (from > to) {
        wrong.push(`upward: ${where}; ${roomOf(edge.to)} is above ${roomOf(edge.from)}`);
        continue;
      }
      const rule = sidewaysRule(edge);
      if (rule === undefined) wrong.push(`sideways: ${where}; ${roomOf(edge.from)} and ${roomOf(edge.to)} are one layer, and SIDEWAYS does not allow it`);
      else if (rule.typeOnly && !edge.typeOnly) wrong.push(`sideways: ${where} for values; SIDEWAYS allows types only (${rule.reason})`);
    }
    expect(wrong).toEqual([]);
  });

  it('needs every exception it lists', () => {
    const unused = SIDEWAYS.filter((rule) => !crossing.some((edge) => sidewaysRule(edge) === rule));
    expect(unused.map((rule) => `unused exception: ${rule.from} -> ${rule.to}`)).toEqual([]);
  });
});
