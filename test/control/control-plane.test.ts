/**
 * The control plane end to end: real HTTP, real WebSocket, real MQTT between the control plane and
 * the fleet, and the /v1 API seeing the result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { createClient } from '../../src/client/index.js';
import { EventSocket } from '../helpers/event-socket.js';
import mqtt from 'mqtt';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('publishes a retained command by hand (to a lock CI-2 lacks) to see the station ignore its retained copy');

let sim: StartedSimulator;
let control: string;
let api: string;

beforeAll(async () => {
  sim = await startSimulator({ fixture: 'fixtures/ci.json', commandTimeoutMs: 400 });
  control = sim.controlUrl!;
  api = sim.apiUrl!;
});
afterAll(async () => {
  await sim.stop();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${control}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

const client = () => createClient({ baseUrl: api, email: 'ci@example.com', password: 'ci-password' });

describe('/sim/v1 control plane', () => {
  it('reports health once every station has come up', async () => {
    const refused = { connect: 0, publish: 0, subscribe: 0, 'packet-too-large': 0 };
    expect(await call('GET', '/health')).toEqual({ status: 200, json: { ready: true, stations: { total: 25, online: 24, offline: 1 }, broker: { refused }, mqtt: { url: expect.stringMatching(/^mqtt:\/\/127\.0\.0\.1:\d+$/), embedded: true } } });
  });

  it('lists the full simulated state of every station and of one', async () => {
    const all = await call('GET', '/stations');
    expect(all.status).toBe(200);
    expect(all.json.stations).toHaveLength(25);
    const one = await call('GET', '/stations/CI-JAMMED');
    expect(one.json).toMatchObject({
      token: 'CI-JAMMED',
      stationId: 3,
      locks: [{ lockId: '1', status: 'jammed', pending: null }],
      battery: { cutoffV: 11.5 },
      faults: [],
    });
    expect(one.json.timers).toEqual([{ kind: 'heartbeat', dueAt: expect.any(String) }]);
  });

  it('takes a station offline with a real disconnect (the API sees it) and back online', async () => {
    const off = await call('POST', '/stations/CI-2/connection', { online: false });
    expect(off).toMatchObject({ status: 200, json: { token: 'CI-2', status: 'offline' } });
    const user = client();
    await expect.poll(async () => (await user.getStation('CI-2')).status).toBe('offline');
    expect(await user.unlock('CI-2', '1')).toEqual({ success: false, message: 'Station is offline' });
    expect((await call('POST', '/stations/CI-2/connection', { online: true })).json.status).toBe('online');
    await expect.poll(async () => (await user.getStation('CI-2')).status).toBe('online');
    expect(await user.unlock('CI-2', '1')).toEqual({ success: true });
  });

  it('jams, unjams, forces open and closed; sets the battery', async () => {
    const user = client();
    await call('POST', '/stations/CI-1/locks/2/physical', { action: 'jam' });
    await expect.poll(async () => (await user.getStation('CI-1')).locks.find((l) => l.lockId === '2')?.status).toBe('jammed');
    expect((await user.unlock('CI-1', '2')).success).toBe(false);
    await call('POST', '/stations/CI-1/locks/2/physical', { action: 'unjam' });
    const opened = await call('POST', '/stations/CI-1/locks/2/physical', { action: 'forceOpen' });
    expect(opened.json.locks[1]).toMatchObject({ lockId: '2', status: 'unlocked', pending: 'open' });
    await call('POST', '/stations/CI-1/locks/2/physical', { action: 'forceClose' });
    const battery = await call('POST', '/stations/CI-1/battery', { voltage: 11.1 });
    expect(battery.json.batteryVoltage).toBe(11.1);
    await expect.poll(async () => (await user.getStation('CI-1')).batteryVoltage).toBe(11.1);
    expect(await user.unlock('CI-1', '1')).toMatchObject({ success: false });
    await call('POST', '/stations/CI-1/battery', { voltage: 12.6 });
  });

  it('injects faults: a dropped command times out, a rejection carries its reason, then they clear', async () => {
    const user = client();
    const dropped = await call('POST', '/stations/CI-FLEET-01/faults', { kind: 'dropCommands', count: 1 });
    expect(dropped).toMatchObject({ status: 201, json: { kind: 'dropCommands', count: 1, id: expect.any(String) } });
    // A dropped command is never acknowledged: the outcome is unknown (504), not a definite failure.
    await expect(user.unlock('CI-FLEET-01', '1')).rejects.toMatchObject({ status: 504, message: expect.stringContaining('did not acknowledge the command in time') });
    expect(await user.unlock('CI-FLEET-01', '1')).toEqual({ success: true });
    const reject = await call('POST', '/stations/CI-FLEET-01/faults', { kind: 'reject', reason: 'maintenance', lockId: '2' });
    expect((await user.unlock('CI-FLEET-01', '2')).success).toBe(false);
    expect((await call('GET', '/stations/CI-FLEET-01')).json.faults).toEqual([{ id: reject.json.id, kind: 'reject', reason: 'maintenance', lockId: '2' }]);
    expect((await call('DELETE', `/stations/CI-FLEET-01/faults/${reject.json.id}`)).json.faults).toEqual([]);
    expect(await call('DELETE', '/stations/CI-FLEET-01/faults/f999')).toEqual({ status: 404, json: { message: 'Fault not found' } });
  });

  it('answers bad requests with 400 and unknown stations or locks with 404', async () => {
    expect(await call('POST', '/stations/NOPE/connection', { online: false })).toEqual({ status: 404, json: { message: 'Station not found' } });
    expect(await call('POST', '/stations/CI-1/locks/9/physical', { action: 'jam' })).toEqual({ status: 404, json: { message: 'Lock not found' } });
    // A wrong kind is answered with the kinds there are; a waiting kind needs its delay.
    expect(await call('POST', '/stations/CI-1/faults', { kind: 'explode' })).toEqual({
      status: 400,
      json: { message: 'kind must be one of dropCommands, delayAcks, reject, ackNoOpen, duplicateState, latency' },
    });
    for (const kind of ['delayAcks', 'latency']) {
      expect(await call('POST', '/stations/CI-1/faults', { kind })).toEqual({ status: 400, json: { message: 'delayMs is required' } });
    }
    expect((await call('POST', '/stations/CI-1/battery', { voltage: 12, volts: 3 })).json).toEqual({ message: 'volts is not an allowed field' });
  });

  it('streams a snapshot, then the unlock chain and API summaries without tokens', async () => {
    const stream = await EventSocket.open(`${control}/events`);
    const snapshot = await stream.waitFor((e) => e.type === 'snapshot', 'the snapshot');
    expect(snapshot.seq).toBe(1);
    expect(snapshot.stations).toHaveLength(25);
    const user = client();
    await user.unlock('CI-FLEET-02', '1');
    const sent = await stream.waitFor((e) => e.type === 'command.sent' && e.token === 'CI-FLEET-02', 'command.sent');
    const acked = await stream.waitFor((e) => e.type === 'command.acked' && e.commandId === sent.commandId, 'command.acked');
    const unlocked = await stream.waitFor((e) => e.type === 'lock.state' && e.token === 'CI-FLEET-02' && e.status === 'unlocked', 'unlocked');
    const locked = await stream.waitFor((e) => e.type === 'lock.state' && e.token === 'CI-FLEET-02' && e.status === 'locked', 'locked');
    expect(acked.ms).toBeGreaterThanOrEqual(0);
    expect([sent.seq, acked.seq, unlocked.seq, locked.seq]).toEqual([...[sent.seq, acked.seq, unlocked.seq, locked.seq]].sort((a, b) => a - b));
    const seqs = stream.events.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    const request = await stream.waitFor((e) => e.type === 'api.request' && e.route === '/v1/stations/:station_token/locks/:lock_id/unlock', 'api.request');
    expect(request).toMatchObject({ method: 'POST', status: 200 });
    const login = await stream.waitFor((e) => e.type === 'api.request' && e.route === '/v1/auth/login', 'login summary');
    expect(JSON.stringify(login)).not.toMatch(/password|eyJ/);
    stream.close();
  });

  it('resets every station to the fixture state', async () => {
    await call('POST', '/stations/CI-OFFLINE/connection', { online: true });
    await call('POST', '/stations/CI-1/faults', { kind: 'latency', delayMs: 10 });
    await call('POST', '/stations/CI-1/locks/1/physical', { action: 'jam' });
    expect(await call('POST', '/reset')).toEqual({ status: 200, json: { reset: 25, missing: 0 } });
    const station = (await call('GET', '/stations/CI-1')).json;
    expect(station).toMatchObject({ faults: [], locks: [{ status: 'locked' }, { status: 'locked' }] });
    expect((await call('GET', '/stations/CI-OFFLINE')).json.status).toBe('offline');
    await expect.poll(async () => (await call('GET', '/health')).json.ready).toBe(true);
  });
});

describe('/sim/v1 and the stations at their edges', () => {
  /** An outside MQTT client on the simulator's broker, recording what it sees. */
  async function outsider(filters: string[]): Promise<{ client: mqtt.MqttClient; seen: { topic: string; payload: string; retain: boolean }[] }> {
    const client = await mqtt.connectAsync(sim.mqttUrl, { reconnectPeriod: 0 });
    const seen: { topic: string; payload: string; retain: boolean }[] = [];
    client.on('message', (topic, payload, packet) => seen.push({ topic, payload: payload.toString(), retain: packet.retain }));
    if (filters.length > 0) await client.subscribeAsync(filters, { qos: 1 });
    return { client, seen };
  }

  it('stays ready after a station is taken offline on purpose, and a reboot needs no body', async () => {
    expect((await call('POST', '/stations/CI-2/connection', { online: false })).status).toBe(200);
    expect(await call('GET', '/health')).toMatchObject({ status: 200, json: { ready: true } });
    const response = await fetch(`${control}/stations/CI-2/reboot`, { method: 'POST' });
    expect(response.status).toBe(200);
    await expect.poll(async () => (await call('GET', '/stations/CI-2')).json.status, { timeout: 5000 }).toBe('online');
  });

  it('a reset publishes the reset state of a station that stays offline', async () => {
    await call('POST', '/stations/CI-OFFLINE/connection', { online: true });
    await call('POST', '/stations/CI-OFFLINE/locks/1/physical', { action: 'jam' });
    await call('POST', '/stations/CI-OFFLINE/connection', { online: false });
    await expect.poll(async () => (await client().getStation('CI-OFFLINE')).locks[0]!.status).toBe('jammed');
    expect((await call('POST', '/reset')).status).toBe(200);
    await expect.poll(async () => (await client().getStation('CI-OFFLINE')).locks[0]!.status).toBe('locked');
  });

  it('keeps the statuses of the fixture stations only, whatever else is published on the status topics', async () => {
    const { client: mqttClient } = await outsider([]);
    for (let i = 0; i < 50; i += 1) {
      await mqttClient.publishAsync(`stations/STRANGER-${i}/status`, JSON.stringify({ stationId: i, status: 'online', batteryVoltage: 12, lastConnection: new Date().toISOString() }), { qos: 1 });
    }
    await mqttClient.endAsync();
    await sim.broker!.sync();
    const statuses = sim.http!.control.hub.readiness.statuses;
    expect([...statuses.keys()].filter((token) => token.startsWith('STRANGER'))).toEqual([]);
    expect((await call('GET', '/health')).json.stations.total).toBe(25);
  });

  it('ignores a control request whose id cannot be a topic level, and keeps answering', async () => {
    const { client: mqttClient } = await outsider([]);
    await mqttClient.publishAsync('station-sim/control/CI-1', JSON.stringify({ requestId: 'a/#', action: 'snapshot' }), { qos: 1 });
    await mqttClient.publishAsync('station-sim/fleet', JSON.stringify({ requestId: 'x'.repeat(60_000), action: 'query' }), { qos: 1 });
    await mqttClient.endAsync();
    // Longer than a topic level may be, the request is over the broker's 64 KiB packet limit too: it closes the connection.
    const { client: large } = await outsider([]);
    large.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => large.once('close', () => resolve()));
    large.publish('station-sim/fleet', JSON.stringify({ requestId: 'x'.repeat(70_000), action: 'query' }), { qos: 1 });
    await closed;
    large.end(true);
    expect((await call('GET', '/stations/CI-1')).status).toBe(200);
    expect((await call('GET', '/stations')).json.stations).toHaveLength(25);
  });

  it('acts on a live command once and not on a retained copy of it, and its last will carries this session', async () => {
    const { client: mqttClient, seen } = await outsider(['stations/CI-2/acks', 'stations/CI-2/status']);
    try {
      await mqttClient.publishAsync('stations/CI-2/locks/2/unlock', JSON.stringify({ commandId: 'kept-1' }), { qos: 1, retain: true });
      await expect.poll(() => seen.filter((message) => message.topic.endsWith('/acks')).length).toBe(1);
      const rebootAt = Date.now();
      await call('POST', '/stations/CI-2/reboot', { downMs: 0 });
      await expect.poll(async () => (await call('GET', '/stations/CI-2')).json.status, { timeout: 5000 }).toBe('online');
      await call('POST', '/stations/CI-2/connection', { online: false }); // a power cut: the last will
      const will = await (async () => {
        await expect.poll(() => seen.some((message) => !message.retain && message.payload.includes('"offline"'))).toBe(true);
        return JSON.parse(seen.filter((message) => !message.retain && message.payload.includes('"offline"')).at(-1)!.payload) as { lastConnection: string };
      })();
      expect(Date.parse(will.lastConnection)).toBeGreaterThanOrEqual(rebootAt);
      // The retained copy came again with the new subscription after the reboot: no second ack.
      expect(seen.filter((message) => message.topic.endsWith('/acks'))).toHaveLength(1);
    } finally {
      await mqttClient.publishAsync('stations/CI-2/locks/2/unlock', '', { qos: 1, retain: true });
      await mqttClient.endAsync();
      await call('POST', '/stations/CI-2/connection', { online: true });
    }
  });
});

describe('/sim/v1 with a control token', () => {
  it('refuses requests and WebSocket upgrades without the token, and says nothing of it', async () => {
    const guarded = await startSimulator({ fixture: { stations: [{ token: 'G', stationId: 1, locks: [{ lockId: '1' }] }] }, controlToken: 'sesame-0123456789' });
    try {
      const denied = await fetch(`${guarded.controlUrl}/health`);
      expect(denied.status).toBe(401);
      expect(await denied.json()).toEqual({ message: 'Control token is invalid' });
      const wrong = await fetch(`${guarded.controlUrl}/health`, { headers: { authorization: 'Bearer sesame' } });
      expect(wrong.status).toBe(401);
      const allowed = await fetch(`${guarded.controlUrl}/health`, { headers: { authorization: 'Bearer sesame-0123456789' } });
      expect(allowed.status).toBe(200);
      await expect(EventSocket.open(`${guarded.controlUrl}/events`)).rejects.toThrow('HTTP 401');
      const stream = await EventSocket.open(`${guarded.controlUrl}/events`, { authorization: 'Bearer sesame-0123456789' });
      expect((await stream.waitFor((e) => e.type === 'snapshot', 'snapshot')).stations).toHaveLength(1);
      stream.close();
    } finally {
      await guarded.stop();
    }
  });
});
