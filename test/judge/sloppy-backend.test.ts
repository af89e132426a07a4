/**
 * The judge against a deliberately sloppy backend (docs/judge.md): an mqtt.js client publishes
 * unlock commands to the simulator's broker the way a careless service would, one kind of mistake
 * per station, and the judge must report exactly those rule ids, with evidence, on
 * `GET /sim/v1/judge`, the event stream and the fleet's own log. station-sim's own `/v1` gateway,
 * doing ordinary unlocks first, must break none.
 *
 * The clock is manual: the sloppy backend stamps `sentAt` from the simulator's clock, as a backend
 * on a synchronised clock would, and the test moves time on where a rule needs it to have passed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt, { type MqttClient } from 'mqtt';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ControlClient, createClient } from '../../src/client/index.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { JudgeReplySchema, SimEventMessageSchema, type JudgeReply } from '../../src/control/wire-schemas.js';
import { EventSocket } from '../helpers/event-socket.js';
import '../helpers/typebox-formats.js';
import { eventually } from '../helpers/eventually.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('a sloppy backend breaks every service rule on purpose');

const station = (token: string, stationId: number, extra: object = {}) => ({ token, stationId, locks: [{ lockId: '1' }, { lockId: '2' }], ...extra });
const TOKENS = ['GW-1', 'GW-2', 'QOS0', 'REUSE', 'STALE', 'FUTURE', 'LOCK', 'BAD', 'BURST', 'RETAIN', 'ASLEEP'];
const FIXTURE = {
  accounts: [{ email: 'ops@example.com', password: 'ops-password', stations: ['GW-1', 'GW-2'] }],
  stations: TOKENS.map((token, index) => station(token, index + 1, token === 'ASLEEP' ? { behaviour: { session: 'persistent' } } : {})),
  // BURST's five commands to one lock are a retry storm too (judge-issue-26.test.ts); here they are the rate's.
  judge: { rules: { 'service.command-rate': { maxCommands: 3, windowMs: 1000 }, 'service.unlock-storm': { enabled: false } } },
};

let sim: StartedSimulator<true>;
let backend: MqttClient;
let stream: EventSocket;

beforeAll(async () => {
  sim = await startSimulator({ fixture: FIXTURE, clock: 'manual' });
  backend = await mqtt.connectAsync(sim.mqttUrl, { clientId: 'sloppy-backend', reconnectPeriod: 0 });
  stream = await EventSocket.open(`${sim.controlUrl}/events`);
});
afterAll(async () => {
  stream?.close();
  await backend?.endAsync();
  await sim?.stop();
});

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${sim.controlUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status, `${method} ${path}`).toBeLessThan(300);
  return response.json();
}

/** Through the typed control client test suites use. */
const judge = (): Promise<JudgeReply> => new ControlClient({ url: sim.controlUrl }).judge();
const at = (offsetMs = 0): string => new Date(sim.clock.now() + offsetMs).toISOString();
const command = (commandId: string, sentAt: string | undefined = at()): string => JSON.stringify({ commandId, ...(sentAt === undefined ? {} : { sentAt }) });
const publish = (token: string, lockId: string, payload: string, options: { qos?: 0 | 1; retain?: boolean } = {}) =>
  backend.publishAsync(`stations/${token}/locks/${lockId}/unlock`, payload, { qos: options.qos ?? 1, retain: options.retain ?? false });

describe('the judge', () => {
  it("finds nothing wrong with station-sim's own /v1 gateway", async () => {
    const user = createClient({ baseUrl: sim.apiUrl, email: 'ops@example.com', password: 'ops-password' });
    for (const [token, lockId] of [['GW-1', '1'], ['GW-1', '2'], ['GW-2', '1'], ['GW-2', '1']] as const) {
      expect((await user.unlock(token, lockId)).success).toBe(true);
    }
    // The station judged each command before it acked it, so the fleet's own log is complete now.
    expect(sim.fleet.judge.summary()).toEqual({});
    expect(sim.fleet.judge.findings()).toEqual([]);
  });

  it('reports exactly the rules a sloppy backend breaks, with evidence', async () => {
    await publish('QOS0', '1', command('q-1'), { qos: 0 });
    await publish('REUSE', '1', command('r-1'));
    await publish('REUSE', '2', command('r-1'));
    await publish('STALE', '1', command('s-1', at(-60_000))); // the TTL is 30 s
    await publish('FUTURE', '1', command('f-1', at(60_000)));
    await publish('LOCK', '9', command('l-1'));
    await publish('BAD', '1', 'open sesame');
    for (const id of ['b-1', 'b-2', 'b-3', 'b-4', 'b-5']) await publish('BURST', '1', command(id));
    // Sent while the station is off: its persistent session queues it until it is back.
    await control('POST', '/stations/ASLEEP/connection', { online: false });
    await publish('ASLEEP', '1', command('a-1'));
    await control('POST', '/clock/advance', { ms: 5000 });
    await control('POST', '/stations/ASLEEP/connection', { online: true });
    // Retained: the broker hands it to the station again when it subscribes again.
    await publish('RETAIN', '1', command('k-1'), { retain: true });
    await control('POST', '/stations/RETAIN/connection', { online: false });
    await control('POST', '/stations/RETAIN/connection', { online: true });
    await backend.publishAsync('stations/RETAIN/locks/1/unlock', '', { qos: 1, retain: true }); // cleared again

    const expected = {
      'service.qos0-command': ['QOS0', 'q-1'],
      'service.command-id-reused': ['REUSE', 'r-1'],
      'service.stale-sent-at': ['STALE', 's-1'],
      'service.future-sent-at': ['FUTURE', 'f-1'],
      'service.unknown-lock': ['LOCK', 'l-1'],
      'service.bad-payload': ['BAD', undefined],
      'service.command-rate': ['BURST', 'b-4'],
      'service.command-to-offline-station': ['ASLEEP', 'a-1'],
      'service.retained-command': ['RETAIN', 'k-1'],
    } as const;
    await eventually(async () => expect(Object.keys((await judge()).summary).sort()).toEqual(Object.keys(expected).sort()), { what: 'every rule found' });
    const reply = await judge();
    expect(TypeCompiler.Compile(JudgeReplySchema).Check(reply)).toBe(true);
    for (const [rule, [token, commandId]] of Object.entries(expected)) {
      const found = reply.findings.filter((finding) => finding.rule === rule);
      expect(found.length, rule).toBeGreaterThan(0);
      expect(found[0], rule).toMatchObject({ token, ...(commandId === undefined ? {} : { commandId }) });
      expect(found[0]!.detail.length, rule).toBeGreaterThan(0);
    }
    // One each, but the retained command: a broker may deliver it with its flag live as well as on the resubscription.
    // (Its clearing, an empty retained message, is no finding.)
    expect(reply.summary).toMatchObject({ 'service.qos0-command': 1, 'service.command-id-reused': 1, 'service.command-rate': 1, 'service.bad-payload': 1 });
    // Nothing for the gateway's stations, whose findings would have come first.
    expect(reply.findings.filter((finding) => finding.token?.startsWith('GW-'))).toEqual([]);
    expect(reply.rules.map((rule) => rule.id)).toContain('service.retained-command');

    // The fleet's own log (what the CLI prints at stop) agrees, and so does the event stream.
    expect(sim.fleet.judge.summary()).toEqual(reply.summary);
    const events = stream.events.filter((event) => event.type === 'judge.finding');
    expect(events.map((event) => event.rule).sort()).toEqual(reply.findings.map((finding) => finding.rule).sort());
    for (const event of events) expect(TypeCompiler.Compile(SimEventMessageSchema).Check(event), JSON.stringify(event)).toBe(true);
  });
});
