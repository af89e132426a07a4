/**
 * What only the embedded broker sees (src/broker/station-watch.ts; docs/judge.md, "What the broker
 * sees"): a command to a station that does not exist, a command published retained and cleared
 * while its station stayed connected, and a station's status, lock state or ack published by
 * another client. Each is judged once, live, and again offline from the transcript; the stations'
 * own messages, their wills and the gateway's unlocks are judged by none of these rules. On the
 * secured broker the ACL refuses the spoofing before anything is published.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlClient, createClient } from '../../src/client/index.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { formatTimeline, parseEntry } from '../../src/transcript/transcript-format.js';
import { StationTopics, DEFAULT_TOPICS } from '../../src/contract/topics.js';
import type { JudgeFinding } from '../../src/judge/judge-log.js';
import { enabledRules } from '../../src/judge/verdict.js';
import { startCarelessBackend, type StartedCarelessBackend } from '../helpers/careless-backend.js';
import { eventually } from '../helpers/eventually.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('a careless backend commands a station that does not exist, retains a command and spoofs stations, on purpose');

const topics = new StationTopics(DEFAULT_TOPICS);
const BROKER_RULES = ['service.command-to-unknown-station', 'service.retained-command', 'service.spoofed-station-message'];

for (const brokerThread of [true, false]) {
  describe(`the embedded broker ${brokerThread ? 'on its own thread' : 'on the calling thread'}`, () => {
    const FIXTURE = {
      accounts: [{ email: 'ops@example.com', password: 'ops-password', stations: ['OK-1'] }],
      defaults: { heartbeatMs: 0 },
      stations: [
        { token: 'OK-1', stationId: 1, locks: [{ lockId: '1' }] },
        { token: 'HELD', stationId: 2, locks: [{ lockId: '1' }] },
        { token: 'VICTIM', stationId: 3, locks: [{ lockId: '1' }] },
        { token: 'DROPPED', stationId: 4, locks: [{ lockId: '1' }] },
      ],
    };
    let run: StartedCarelessBackend | undefined;
    let sim: StartedSimulator<true>;
    let backend: MqttClient;
    let control: ControlClient;
    const command = (commandId: string): string => JSON.stringify({ commandId, sentAt: new Date().toISOString() });
    const findings = async (): Promise<JudgeFinding[]> => (await control.judge()).findings.filter((finding) => BROKER_RULES.includes(finding.rule));

    beforeAll(async () => {
      run = await startCarelessBackend({ fixture: FIXTURE, brokerThread });
      ({ sim, backend, control } = run);
    });
    afterAll(() => run?.remove());

    it("judges nothing of the gateway's unlocks, the stations' own messages and a station's last will", async () => {
      const user = createClient({ baseUrl: sim.apiUrl, email: 'ops@example.com', password: 'ops-password' });
      expect((await user.unlock('OK-1', '1')).success).toBe(true);
      // Dropped without DISCONNECT: the broker publishes the station's will, on its own status topic.
      await control.setConnection('DROPPED', false);
      await eventually(async () => expect((await control.station('DROPPED')).status).toBe('offline'), { what: 'DROPPED offline' });
      await control.setConnection('DROPPED', true);
      await sim.broker!.sync();
      expect((await control.judge()).findings).toEqual([]);
      expect(sim.fleet.judge.findings()).toEqual([]);
    });

    it('reports a command to a station that does not exist', async () => {
      await backend.publishAsync(topics.topic('unlock', { token: 'ST-9999', lockId: '1' }), command('nowhere-1'), { qos: 1 });
      await eventually(async () => expect((await findings()).map((finding) => finding.commandId)).toContain('nowhere-1'), { what: 'the finding for nowhere-1' });
      const [finding] = (await findings()).filter((found) => found.commandId === 'nowhere-1');
      expect(finding).toMatchObject({ rule: 'service.command-to-unknown-station', token: 'ST-9999', lockId: '1' });
      expect(finding!.detail).toMatch(/careless-backend.*delivered it to nobody/);
    });

    it('reports a command published retained and cleared once the station got it live, once', async () => {
      const topic = topics.topic('unlock', { token: 'HELD', lockId: '1' });
      await backend.publishAsync(topic, command('held-1'), { qos: 1, retain: true });
      // It reached the station live, flag cleared: the lock opened. Only then is it cleared.
      await eventually(async () => expect((await control.station('HELD')).locks[0]!.status).not.toBe('locked'), { what: 'HELD to open' });
      await backend.publishAsync(topic, '', { qos: 1, retain: true });
      await eventually(async () => expect((await findings()).filter((found) => found.commandId === 'held-1')).toHaveLength(1), { what: 'the finding for held-1' });
      const [finding] = (await findings()).filter((found) => found.commandId === 'held-1');
      expect(finding).toMatchObject({ rule: 'service.retained-command', token: 'HELD', lockId: '1' });
      expect(finding!.detail).toMatch(/^published retained by client "careless-backend"/);
      // Read at stop, nothing is held any more: still one.
      await sim.fleet.judgeRetainedCommands();
      expect((await findings()).filter((found) => found.commandId === 'held-1')).toHaveLength(1);
    });

    it('reports a retained command once, not again when the station gets it on its next subscription or at stop', async () => {
      await backend.publishAsync(topics.topic('unlock', { token: 'HELD', lockId: '1' }), command('held-2'), { qos: 1, retain: true });
      await control.setConnection('HELD', false);
      await control.setConnection('HELD', true);
      await sim.fleet.judgeRetainedCommands();
      await sim.broker!.sync();
      await eventually(async () => expect((await findings()).filter((found) => found.commandId === 'held-2')).toHaveLength(1), { what: 'the finding for held-2' });
      expect(sim.fleet.judge.findings().filter((found) => found.commandId === 'held-2')).toHaveLength(1);
      await backend.publishAsync(topics.topic('unlock', { token: 'HELD', lockId: '1' }), '', { qos: 1, retain: true });
    });

    it("reports a station's status, lock state and ack published by another client", async () => {
      const status = { stationId: 3, status: 'offline', batteryVoltage: 12, lastConnection: new Date().toISOString() };
      await backend.publishAsync(topics.topic('status', { token: 'VICTIM' }), JSON.stringify(status), { qos: 1 });
      await backend.publishAsync(topics.topic('lockState', { token: 'VICTIM', lockId: '1' }), JSON.stringify({ lockId: '1', status: 'unlocked', lastUpdated: new Date().toISOString() }), { qos: 1 });
      await backend.publishAsync(topics.topic('acks', { token: 'VICTIM' }), JSON.stringify({ commandId: 'forged-ack', lockId: '1', accepted: true }), { qos: 1 });
      await eventually(async () => expect((await findings()).filter((found) => found.rule === 'service.spoofed-station-message')).toHaveLength(3), { what: 'three spoofing findings' });
      const spoofed = (await findings()).filter((found) => found.rule === 'service.spoofed-station-message');
      expect(spoofed.map((found) => [found.token, found.lockId, found.commandId])).toEqual([
        ['VICTIM', undefined, undefined],
        ['VICTIM', '1', undefined],
        ['VICTIM', undefined, 'forged-ack'],
      ]);
      expect(spoofed[0]!.detail).toBe('client "careless-backend" published the station\'s status; only the station may');
    });

    it('gives the same verdict offline, from the transcript', async () => {
      const live = (await control.judge()).summary;
      expect(live).toEqual({ 'service.command-to-unknown-station': 1, 'service.retained-command': 2, 'service.spoofed-station-message': 3 });
      const replay = await run!.rejudge();
      expect(replay.summary).toEqual(live);
      expect(replay.unjudgeable).toBe(0);
      // Only the misdeeds carry what the broker saw, and `transcript show` says it.
      const entries = readFileSync(run!.transcript, 'utf8').split('\n').filter(Boolean).map((line) => parseEntry(line)!);
      const published = entries.filter((entry) => entry.kind === 'mqtt' && entry.published !== undefined);
      expect(published).toHaveLength(6);
      const shown = formatTimeline(published).join('\n');
      expect(shown).toContain('(published to no station, by client "careless-backend")');
      expect(shown).toContain('(published retained, by client "careless-backend")');
      expect(shown).toContain('(published not by the station, by client "careless-backend")');
    });
  });
}

describe('the secured embedded broker', () => {
  let dir: string;
  let sim: StartedSimulator<true> | undefined;
  const PASSWORD = 'observer-secret-pass';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'broker-seen-secured-'));
    const ci = JSON.parse(readFileSync('fixtures/ci.json', 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'observer.pass'), PASSWORD);
    const fixture = join(dir, 'fixture.json');
    writeFileSync(fixture, JSON.stringify({ ...ci, mqtt: { identities: { observer: { password: { file: 'observer.pass' } } } } }));
    sim = await startSimulator({ fixture });
  });
  afterAll(async () => {
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a spoofed status as before: nothing is published, so nothing is judged', async () => {
    expect(sim!.broker!.auth).toBe(true);
    const reader = await mqtt.connectAsync(sim!.mqttUrl, { reconnectPeriod: 0, clientId: 'reader-1', username: 'station-sim-observer', password: PASSWORD });
    reader.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => reader.once('close', () => resolve()));
    reader.publish(topics.topic('status', { token: 'CI-1' }), JSON.stringify({ stationId: 1, status: 'offline', batteryVoltage: 12, lastConnection: new Date().toISOString() }), { qos: 1 });
    await closed;
    await eventually(() => expect(sim!.broker!.refusedCounts().publish).toBe(1), { what: 'the publish refused' });
    await sim!.broker!.sync();
    const control = new ControlClient({ url: sim!.controlUrl });
    expect((await control.station('CI-1')).status).toBe('online');
    expect((await control.judge()).findings).toEqual([]);
  });
});

describe('with an external broker', () => {
  it('lists the rules only the embedded broker judges as skipped, not passed, in a report', () => {
    const skipped = enabledRules({}, { summary: {} }, { brokerJudged: false }).filter((rule) => rule.skipped !== undefined);
    expect(skipped.map((rule) => rule.id)).toEqual(['service.command-to-unknown-station', 'service.spoofed-station-message']);
    expect(enabledRules({}, { summary: {} }, { brokerJudged: true }).filter((rule) => rule.skipped !== undefined)).toEqual([]);
  });
});
