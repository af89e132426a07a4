/**
 * The shell examples of the README and of docs/ run as written, so a doc cannot part from the code:
 * every ```sh block is either run here, against simulators this file starts (the demo fixture for
 * the README, the ci fixture for `$SIM` in docs/control-plane.md), or named below with the test
 * that runs it or why it cannot run here. A new block that is neither fails the first test.
 *
 * Running a block: its commands go to bash one after another (variables carry over), with the
 * README's example addresses (`http://127.0.0.1:8080`, MQTT port 40123) replaced by the
 * simulator's. A command whose comment is JSON (`# {"success":true}`, on its line or the comment
 * lines right after it) must print JSON of that shape: the same keys, the same strings, booleans
 * and nulls; numbers may differ (an example's `"mark":57`), and a comment with `…` in it is prose.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { toolAvailable } from '../helpers/required-tool.js';

interface Block {
  file: string;
  line: number;
  code: string;
}

/** Every ```sh block of the README and docs/. */
function shellBlocks(): Block[] {
  const files = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
  return files.flatMap((file) => {
    const lines = readFileSync(file, 'utf8').split('\n');
    const blocks: Block[] = [];
    for (let index = 0; index < lines.length; index += 1) {
      if (lines[index] !== '```sh') continue;
      const end = lines.indexOf('```', index + 1);
      blocks.push({ file, line: index + 1, code: lines.slice(index + 1, end).join('\n') });
      index = end;
    }
    return blocks;
  });
}

/**
 * Blocks not run here, by their first line: where they are run instead, or why they cannot be.
 * Keep it short: a block that can run against a simulator belongs in RUN.
 */
const NOT_RUN_HERE: Record<string, string> = {
  'npm ci          # the dependencies, and the build in dist/': 'the set-up of a clone; CI runs exactly these (.ci/run)',
  "npm install --save-dev 'git+https://github.com/<owner>/station-sim.git#main'     # or #<tag>, #<commit>": 'test/packaging/consumer-install.test.ts installs from a local git URL and a tarball',
  'npx station-sim up --fixture demo --dashboard auto': 'a terminal UI on fixed ports; test/dashboard/tmux-smoke.test.ts runs up --dashboard in tmux',
  'npx station-sim up --fixture demo': 'runs until stopped, on the default ports; test/cli/cli.test.ts runs up',
  'npx station-sim run --fixture ci --ready-file sim.json &': 'needs the installed package (npx): test/packaging/consumer-install.test.ts runs it as written',
  'npx station-sim run --fixture ci -- npx vitest run --no-file-parallelism': 'needs the installed package and a suite: test/packaging/consumer-install.test.ts runs the vitest and node:test forms',
  'npm ci && npm start     # the simulator from the sources, demo fixture, dashboard in a terminal': 'the set-up of a clone; CI runs npm ci and npm test (.ci/run)',
  'npx openapi-typescript http://127.0.0.1:8080/v1/openapi.json -o v1-api.ts   # then createClient<paths>() of openapi-fetch': 'test/service/http/openapi-generated-client.test.ts generates and uses the client',
  'curl -X PUT http://127.0.0.1:8080/sim/v1/stations/ST-1/link \\': 'needs a station with a link, which neither fixture here has: test/fleet/link-conditions.test.ts changes links through the control plane',
  'ip netns add station-host': 'needs root and a network namespace of its own; test/fleet/link-conditions.test.ts covers the in-process links',
  'docker build -f deploy/Dockerfile -t station-sim:0.1.0 .    # from the repository\'s root; push it where the cluster pulls from':
    'needs a container runtime and a cluster: test/deploy/orchestrator.test.ts runs the pods\' command without one, and builds the image where a Docker daemon answers',
  'mosquitto -c mosquitto.conf            # with: listener 1884, allow_anonymous true, set_tcp_nodelay true, max_connections -1': 'fixed ports and a Mosquitto of its own: test/simulator/shards.test.ts runs shards against Mosquitto',
};

/** Commands that are in a run block but cannot run here: they never end, or the tool is not installed. */
const SKIPPED_COMMANDS: { starts: string; why: string }[] = [{ starts: 'websocat ', why: 'not a Debian package; test/control/event-stream-upgrade.test.ts reads the stream' }];

const firstLine = (block: Block): string => block.code.split('\n')[0]!;

/** A command and the output its comment promises, if it promises JSON. */
interface Step {
  command: string;
  expected?: unknown;
}

/** The index of a ` # ` comment outside quotes, or -1. */
function commentStart(line: string): number {
  let quote: string | undefined;
  for (let index = 0; index < line.length; index += 1) {
    const char = line[index]!;
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '#' && (index === 0 || /\s/.test(line[index - 1]!))) return index;
  }
  return -1;
}

function parseJson(text: string): unknown {
  if (text.includes('…')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The block as commands (continuation lines joined), each with the JSON its comment promises. */
function steps(code: string): Step[] {
  const result: Step[] = [];
  let pending = '';
  let commentOf: Step | undefined;
  let commentJson = '';
  const flushComment = (): void => {
    if (commentOf && commentJson !== '') commentOf.expected = parseJson(commentJson);
    commentJson = '';
  };
  for (const raw of code.split('\n')) {
    const at = commentStart(raw);
    const text = (at === -1 ? raw : raw.slice(0, at)).trimEnd();
    const comment = at === -1 ? '' : raw.slice(at + 1).trim();
    if (text.trim() === '') {
      // A comment line: the output of the command before it, when it reads as JSON.
      const incomplete = commentJson !== '' && parseJson(commentJson.replaceAll('…', '')) === undefined;
      if (commentOf && (incomplete || (commentJson === '' && comment.startsWith('{')))) commentJson += comment;
      else flushComment();
      continue;
    }
    flushComment();
    if (text.endsWith('\\')) {
      pending += `${text.slice(0, -1).trim()} `;
      continue;
    }
    const step: Step = { command: `${pending}${text.trim()}` };
    pending = '';
    result.push(step);
    commentOf = step;
    if (comment.startsWith('{')) commentJson = comment;
  }
  flushComment();
  return result;
}

/** JSON of the shape `expected` shows: same keys, same strings, booleans and nulls; numbers are numbers. */
function shapeOf(value: unknown, like: unknown): unknown {
  if (typeof like === 'number') return typeof value === 'number' ? like : value;
  if (Array.isArray(like) && Array.isArray(value)) return value.map((item, index) => shapeOf(item, like[index] ?? like[0]));
  if (like !== null && typeof like === 'object' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shapeOf(item, (like as Record<string, unknown>)[key])]));
  }
  return value;
}

interface Ran {
  step: Step;
  output: string;
}

/**
 * Runs the steps in one bash, each output cut out by a marker line. Asynchronously: the simulators
 * answering the commands run in this process.
 */
async function runSteps(block: Block, list: Step[], replace: (command: string) => string, env: Record<string, string>): Promise<Ran[]> {
  const marker = '@@station-sim-step@@';
  const script = ['set -e', ...list.map((step) => `echo '${marker}'\n${replace(step.command)}\necho`)].join('\n');
  const child = spawn('bash', ['-c', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(code, `${block.file}:${block.line} exited with ${code}\n${stderr}`).toBe(0);
  const outputs = stdout.split(`${marker}\n`).slice(1);
  return list.map((step, index) => ({ step, output: (outputs[index] ?? '').trim() }));
}

const RUN = (block: Block): boolean => !(firstLine(block) in NOT_RUN_HERE);

let demo: StartedSimulator;
let ci: StartedSimulator;
beforeAll(async () => {
  for (const tool of ['curl', 'jq']) toolAvailable({ command: tool, probe: ['--version'], what: "the docs' shell examples", aptPackage: tool });
  toolAvailable({ command: 'mosquitto_pub', probe: ['--help'], what: "the docs' shell examples", aptPackage: 'mosquitto-clients' });
  [demo, ci] = await Promise.all([startSimulator({ fixture: 'demo', httpPort: 0, mqttPort: 0 }), startSimulator({ fixture: 'ci', httpPort: 0, mqttPort: 0 })]);
}, 60_000);

afterAll(async () => {
  await Promise.all([demo?.stop(), ci?.stop()]);
});

describe("the docs' shell examples", () => {
  it('are each run here or named with where they run', () => {
    const blocks = shellBlocks();
    expect(blocks.length).toBeGreaterThan(5);
    const known = new Set(blocks.map(firstLine));
    // A block named here that the docs no longer have: take it out of the list.
    expect(Object.keys(NOT_RUN_HERE).filter((line) => !known.has(line))).toEqual([]);
  });

  const blocks = shellBlocks().filter(RUN);
  it.each(blocks.map((block) => [`${block.file}:${block.line}`, block] as const))('%s runs as written and prints what its comments say', async (_where, block) => {
    const sim = block.file === 'README.md' ? demo : ci;
    const mqttPort = new URL(sim.mqttUrl).port;
    const replace = (command: string): string =>
      command
        .replaceAll('http://127.0.0.1:8080', sim.apiUrl!)
        .replaceAll('ws://127.0.0.1:8080', sim.apiUrl!.replace(/^http/, 'ws'))
        .replaceAll('-p 40123', `-p ${mqttPort}`)
        // It prints the retained messages, then waits for more: take what is retained and stop.
        .replace(/^mosquitto_sub /, 'mosquitto_sub -W 2 -C 5 ');
    const list = steps(block.code).filter((step) => !SKIPPED_COMMANDS.some((skip) => step.command.startsWith(skip.starts)));
    expect(list.length, `${block.file}:${block.line} has commands to run`).toBeGreaterThan(0);
    for (const { step, output } of await runSteps(block, list, replace, { SIM: sim.apiUrl! })) {
      if (step.expected === undefined) continue;
      let printed: unknown;
      expect(() => (printed = JSON.parse(output)), `${step.command} printed ${output}`).not.toThrow();
      expect(shapeOf(printed, step.expected), step.command).toEqual(step.expected);
    }
  }, 60_000);
});

describe('reading the examples', () => {
  it('takes the JSON a comment promises, on its line or the comment lines after it, and leaves prose alone', () => {
    const read = steps(
      [
        'A=1',
        'curl -s x \\',
        "  -d '{\"k\":\"#\"}'",
        '# {"id":"api-1","status":401,',
        '#  "count":1}',
        '# Prose after the JSON.',
        'curl -s y   # {"success":true}',
        'curl -s z   # {"faults":[…]}',
        'curl -s w   # back to the fixture',
      ].join('\n'),
    );
    expect(read).toEqual([
      { command: 'A=1' },
      { command: "curl -s x -d '{\"k\":\"#\"}'", expected: { id: 'api-1', status: 401, count: 1 } },
      { command: 'curl -s y', expected: { success: true } },
      { command: 'curl -s z', expected: undefined },
      { command: 'curl -s w' },
    ]);
  });

  it('holds strings and booleans to the example, and numbers to being numbers', () => {
    expect(shapeOf({ cleared: 3, mark: 9 }, { cleared: 57, mark: 57 })).toEqual({ cleared: 57, mark: 57 });
    expect(shapeOf({ success: false, message: 'Lock is jammed' }, { success: true })).not.toEqual({ success: true });
    expect(shapeOf({ reset: 25, missing: 0, extra: 1 }, { reset: 25, missing: 0 })).not.toEqual({ reset: 25, missing: 0 });
  });

  it('finds the promised outputs of the examples it runs', () => {
    const promised = shellBlocks()
      .filter(RUN)
      .flatMap((block) => steps(block.code))
      .filter((step) => step.expected !== undefined);
    expect(promised.length).toBeGreaterThanOrEqual(6);
  });
});
