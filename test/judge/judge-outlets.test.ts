/**
 * The judge's outlets at stop, from the real CLI (docs/judge.md, "Where findings show"): a sloppy
 * backend (test/judge/programs/sloppy-backend.mjs) run as the command of
 * `station-sim run --judge strict --judge-report f.xml --record t.jsonl` fails the run with exit 3
 * although it exits 0; the JUnit report, read with a real XML parser, fails exactly the rules it
 * broke; and `station-sim transcript judge t.jsonl` finds the same ids offline. A clean backend
 * passes under strict.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { runCliInProcess, runCliToEnd } from '../helpers/cli-process.js';
import { JUDGE_RULES } from '../../src/judge/rule-catalogue.js';
import { RUN_EXIT } from '../../src/cli/commands/run/interface.js';
import mqtt from 'mqtt';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { CliProcess } from '../helpers/cli-process.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('sloppy backends break service rules on purpose, to see every outlet report them');

const SLOPPY = 'test/judge/programs/sloppy-backend.mjs';
/** What the sloppy backend breaks, and nothing else (see its header). */
const BROKEN = ['service.qos0-command', 'service.retained-command', 'service.unknown-lock'];

interface Testcase {
  '@_classname': string;
  '@_name': string;
  failure?: { '@_message': string; '#text'?: string }[];
}

/** The report, checked to be well-formed XML, as its test cases. */
async function readReport(path: string): Promise<{ suite: Record<string, string>; cases: Testcase[] }> {
  const xml = await readFile(path, 'utf8');
  expect(XMLValidator.validate(xml)).toBe(true);
  const parsed = new XMLParser({ ignoreAttributes: false, isArray: (name) => name === 'testcase' || name === 'failure' || name === 'testsuite' }).parse(xml) as {
    testsuites: { testsuite: (Record<string, string> & { testcase: Testcase[] })[] };
  };
  const suites = parsed.testsuites.testsuite;
  expect(suites).toHaveLength(1);
  const { testcase, ...suite } = suites[0]!;
  return { suite, cases: testcase };
}

const failing = (cases: Testcase[]): string[] => cases.filter((c) => c.failure !== undefined).map((c) => c['@_name']).sort();

describe('the judge at stop, from the CLI', () => {
  it('run --judge strict fails a passing command that broke rules, with a JUnit report and a transcript that agree', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'judge-outlets-'));
    const report = join(dir, 'f.xml');
    const transcript = join(dir, 't.jsonl');
    const run = await runCliToEnd(['run', '--fixture', 'fixtures/ci.json', '--judge', 'strict', '--judge-report', report, '--record', transcript, '--', process.execPath, SLOPPY]);
    expect(run.code, run.stderr).toBe(RUN_EXIT.judgeFindings);
    expect(run.stderr).toContain('station-sim: judge: 3 findings: service.qos0-command ×1, service.retained-command ×1, service.unknown-lock ×1\n');
    expect(run.stderr).toMatch(/judge: strict: the command passed but 3 rules were broken \(3 findings\); exiting with 3\n/);
    expect(run.stderr).toMatch(/service\.unknown-lock {2}CI-2\/9 {2}command sloppy-lock: the station has no lock 9/);

    const { suite, cases } = await readReport(report);
    expect(suite).toMatchObject({ '@_name': 'station-sim judge', '@_tests': String(JUDGE_RULES.length), '@_failures': '3' });
    // One test case per rule, named by its id, classed by who it judges.
    expect(cases.map((c) => c['@_name'])).toEqual(JUDGE_RULES.map((rule) => rule.id));
    expect(cases.map((c) => c['@_classname'])).toEqual(JUDGE_RULES.map((rule) => rule.party));
    expect(failing(cases)).toEqual(BROKEN);
    const qos0 = cases.find((c) => c['@_name'] === 'service.qos0-command')!.failure![0]!;
    expect(qos0['@_message']).toBe('service.qos0-command at CI-1/1: delivered at QoS 0; the contract is QoS 1');
    expect(qos0['#text']).toMatch(/CI-1\/1 {2}command sloppy-qos0: delivered at QoS 0/);
    // Only the report itself is left in the directory: the temporary file was renamed.
    expect((await readdir(dir)).sort()).toEqual(['f.xml', 't.jsonl']);

    // Offline, from the transcript alone: the same ids, and exit 1.
    const offlineReport = join(dir, 'offline.xml');
    const offline = await runCliInProcess(['transcript', 'judge', transcript, '--judge-report', offlineReport]);
    expect(offline.code, offline.stderr).toBe(1);
    expect(offline.stderr).toBe('');
    expect(offline.stdout).toMatch(/t\.jsonl: \d+ commands judged, by the judge settings the transcript recorded\n/);
    expect(offline.stdout).toContain('judge: 3 findings: service.qos0-command ×1, service.retained-command ×1, service.unknown-lock ×1\n');
    expect(failing((await readReport(offlineReport)).cases)).toEqual(BROKEN);

    // The findings are in the transcript too, as judge entries, and in their command's chain.
    const shown = await runCliInProcess(['transcript', 'show', transcript, '--kind', 'judge']);
    expect(shown.code).toBe(0);
    expect(shown.stdout.trim().split('\n').map((line) => /JUDGE (\S+)/.exec(line)?.[1]).sort()).toEqual(BROKEN);
    const chain = await runCliInProcess(['transcript', 'show', transcript, '--command', 'sloppy-qos0']);
    expect(chain.stdout).toMatch(/MQTT  → CI-1\/1  stations\/CI-1\/locks\/1\/unlock  .*\(QoS 0\)\n/);
    expect(chain.stdout).toMatch(/JUDGE service\.qos0-command  CI-1\/1  command sloppy-qos0: delivered at QoS 0/);

    // Judged by a fixture that switches a rule off, that rule is no longer failed.
    const lenient = join(dir, 'lenient.json');
    const fixture = JSON.parse(await readFile('fixtures/ci.json', 'utf8')) as Record<string, unknown>;
    await writeFile(lenient, JSON.stringify({ ...fixture, $schema: undefined, judge: { rules: { 'service.qos0-command': { enabled: false } } } }));
    const lenientReport = join(dir, 'lenient.xml');
    const judgedAgain = await runCliInProcess(['transcript', 'judge', transcript, '--fixture', lenient, '--judge-report', lenientReport]);
    expect(judgedAgain.code, judgedAgain.stderr).toBe(1);
    const again = await readReport(lenientReport);
    expect(again.cases.map((c) => c['@_name'])).not.toContain('service.qos0-command');
    expect(failing(again.cases)).toEqual(BROKEN.filter((id) => id !== 'service.qos0-command'));
  });

  it('run --judge strict fails a backend that left a command retained, though its station only saw it live', { timeout: 120_000 }, async () => {
    const run = await runCliToEnd(['run', '--fixture', 'fixtures/ci.json', '--judge', 'strict', '--', process.execPath, SLOPPY, 'retained']);
    expect(run.code, run.stderr).toBe(RUN_EXIT.judgeFindings);
    expect(run.stderr).toContain('station-sim: judge: 1 finding: service.retained-command ×1\n');
    expect(run.stderr).toMatch(/service\.retained-command {2}CI-FLEET-02\/1 {2}command sloppy-retained-live/);
  });

  it('a clean command under strict exits 0 with every test case passed; a failing one keeps its code and still gets its report', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'judge-outlets-'));
    const report = join(dir, 'f.xml');
    const transcript = join(dir, 't.jsonl');
    const clean = await runCliToEnd(['run', '--fixture', 'fixtures/ci.json', '--judge', 'strict', '--judge-report', report, '--record', transcript, '--', process.execPath, SLOPPY, 'clean']);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stderr).toContain('station-sim: judge: no findings\n');
    const { suite, cases } = await readReport(report);
    expect(suite['@_failures']).toBe('0');
    expect(failing(cases)).toEqual([]);
    const offline = await runCliInProcess(['transcript', 'judge', transcript]);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toMatch(/: 1 command judged, by the judge settings the transcript recorded\njudge: no findings\n$/);

    const failed = await runCliToEnd(['run', '--fixture', 'fixtures/ci.json', '--judge', 'strict', '--judge-report', report, '--', process.execPath, '-e', 'process.exit(4)']);
    expect(failed.code, failed.stderr).toBe(4);
    expect((await readReport(report)).suite['@_failures']).toBe('0');
  });

  it('--judge off neither fails the run nor says anything of the judge; report, the default, only says', { timeout: 120_000 }, async () => {
    const off = await runCliToEnd(['run', '--fixture', 'fixtures/ci.json', '--judge', 'off', '--', process.execPath, SLOPPY]);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).not.toContain('judge');
    const report = await runCliToEnd(['run', '--fixture', 'fixtures/ci.json', '--', process.execPath, SLOPPY]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stderr).toContain('station-sim: judge: 3 findings: service.qos0-command ×1, service.retained-command ×1, service.unknown-lock ×1\n');
    expect(report.stderr).not.toContain('strict');
  });

  it('refuses judge options that make no sense, as usage errors', async () => {
    const cases: [string[], RegExp][] = [
      [['run', '--judge', 'loud', '--', 'true'], /Invalid values:[\s\S]*judge/],
      [['run', '--judge-report', '', '--', 'true'], /--judge-report needs a file name/],
      [['run', '--judge', 'off', '--judge-report', 'x.xml', '--', 'true'], /--judge-report and --judge off do not go together/],
      [['transcript', 'judge'], /Not enough non-option arguments/],
      [['transcript', 'judge', 'x.jsonl', '--fixture', ''], /--fixture needs a fixture file/],
    ];
    for (const [args, message] of cases) {
      const result = await runCliInProcess(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
    const missing = await runCliInProcess(['transcript', 'judge', join(tmpdir(), 'no-such-transcript.jsonl')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read transcript .*no-such-transcript\.jsonl: ENOENT/);
  });

  it('says which commands of a transcript it could not judge, and fails', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'judge-outlets-'));
    const file = join(dir, 'old.jsonl');
    // A transcript from before station-sim recorded what a station saw of a command.
    const old = { t: '2026-03-01T00:00:00.000Z', kind: 'mqtt', direction: 'down', station: 'CI-1', lockId: '1', topic: 'stations/CI-1/locks/1/unlock', payload: { commandId: 'c' }, commandId: 'c' };
    await writeFile(file, `${JSON.stringify(old)}\n`);
    const result = await runCliInProcess(['transcript', 'judge', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('0 commands judged, by the default judge settings');
    expect(result.stderr).toMatch(/1 command of .*old\.jsonl could not be judged: its entry lacks what the station saw \(QoS, retain flag, online state\)/);
  });
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Publishes a QoS 0 command to CI-1 on `url` and waits for its ack: the station judged it first. */
async function sendQos0(url: string): Promise<void> {
  const observer = await MqttObserver.connect(url, ['stations/CI-1/acks']);
  cleanups.push(() => observer.close());
  const backend = await mqtt.connectAsync(url, { clientId: 'sloppy-backend', reconnectPeriod: 0 });
  cleanups.push(() => backend.endAsync());
  await backend.publishAsync('stations/CI-1/locks/1/unlock', JSON.stringify({ commandId: 'q-1', sentAt: new Date().toISOString() }), { qos: 0 });
  await observer.waitFor((m) => m.json.commandId === 'q-1', 'the ack of q-1');
}

describe('--judge-report on the long-running commands', () => {
  it('up writes the report when it is stopped, from the control plane\'s log', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'judge-outlets-'));
    const report = join(dir, 'up.xml');
    const cli = new CliProcess(['up', '--fixture', 'fixtures/ci.json', '--http-port', '0', '--mqtt-port', '0', '--json', '--judge-report', report]);
    cleanups.push(async () => cli.child.exitCode === null && cli.signal('SIGKILL'));
    const ready = await cli.readyJson();
    await sendQos0(ready.mqttUrl as string);
    expect(await cli.signal('SIGTERM')).toBe(0);
    expect(cli.stderr).toContain('station-sim: judge: 1 finding: service.qos0-command ×1\n');
    expect(failing((await readReport(report)).cases)).toEqual(['service.qos0-command']);
  });

  it("stations, with no control plane, writes its own fleet's verdict", { timeout: 120_000 }, async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    cleanups.push(() => broker.stop());
    const dir = await mkdtemp(join(tmpdir(), 'judge-outlets-'));
    const report = join(dir, 'stations.xml');
    const cli = new CliProcess(['stations', '--broker', broker.url, '--fixture', 'fixtures/ci.json', '--json', '--judge-report', report]);
    cleanups.push(async () => cli.child.exitCode === null && cli.signal('SIGKILL'));
    await cli.readyJson();
    await sendQos0(broker.url);
    expect(await cli.signal('SIGTERM')).toBe(0);
    expect(failing((await readReport(report)).cases)).toEqual(['service.qos0-command']);
  });

  it('refuses a report path it cannot write before starting, and fails at stop if it became one', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'judge-outlets-'));
    const early = await runCliInProcess(['run', '--fixture', 'fixtures/ci.json', '--judge-report', join(dir, 'missing', 'r.xml'), '--', 'true']);
    expect(early.code).toBe(RUN_EXIT.simulatorFailed);
    expect(early.stderr).toMatch(/^station-sim: cannot write the judge report .*missing\/r\.xml: its directory does not exist \(ENOENT\)\n$/);
    const directory = await runCliInProcess(['transcript', 'judge', 'x.jsonl', '--judge-report', dir]);
    expect(directory.code).toBe(1);
    expect(directory.stderr).toContain('it is a directory (EISDIR)');

    const later = join(dir, 'later');
    await mkdir(later);
    const report = join(later, 'up.xml');
    const cli = new CliProcess(['up', '--fixture', 'fixtures/ci.json', '--http-port', '0', '--mqtt-port', '0', '--json', '--judge-report', report]);
    cleanups.push(async () => cli.child.exitCode === null && cli.signal('SIGKILL'));
    await cli.readyJson();
    await rm(later, { recursive: true });
    expect(await cli.signal('SIGTERM')).toBe(1);
    expect(cli.stderr).toContain('station-sim: judge: no findings\n');
    expect(cli.stderr).toMatch(/station-sim: cannot write the judge report .*later\/up\.xml: its directory does not exist \(ENOENT\)\n/);
  });
});
