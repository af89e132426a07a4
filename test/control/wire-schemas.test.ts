/**
 * The wire schemas (src/control/wire-schemas.ts) against a running simulator: every event the
 * stream sends and every reply of the control plane must pass them, checked with TypeBox's own
 * compiler (not fastify's, which serialises by them and would hide a mismatch), and every event
 * must be one the dashboard's parser accepts. The dashboard's types are the schemas' (a compile-time
 * fact, src/client/sim-types.ts); this holds the schemas to what the server really sends.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import '../helpers/typebox-formats.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { createClient } from '../../src/client/index.js';
import {
  ClockReplySchema,
  FaultSchema,
  HealthReplySchema,
  ResetReplySchema,
  SIM_EVENT_TYPES,
  SimEventMessageSchema,
  SimStationSchema,
  StationListReplySchema,
} from '../../src/control/wire-schemas.js';
import { parseSimEvent } from '../../src/client/sim-types.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { EventSocket } from '../helpers/event-socket.js';

let sim: StartedSimulator;
let control: string;

beforeAll(async () => {
  sim = await startSimulator({ fixture: 'fixtures/ci.json', commandTimeoutMs: 300, brokerAuth: true });
  control = sim.controlUrl!;
});
afterAll(async () => {
  await sim.stop();
});


/** Problems of `value` against `schema`, as `path: message` lines (none when it passes). */
function problems(schema: TSchema, value: unknown): string[] {
  return [...TypeCompiler.Compile(schema).Errors(value)].map((error) => `${error.path}: ${error.message}`);
}

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${control}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

/** After the stream's snapshot, unlocks CI-2's lock 1 as the ci account and waits for its relock. */
async function unlockAndWaitForRelock(stream: EventSocket): Promise<ReturnType<typeof createClient>> {
  await stream.waitFor((event) => event.type === 'snapshot', 'the snapshot');
  const user = createClient({ baseUrl: sim.apiUrl!, email: 'ci@example.com', password: 'ci-password' });
  expect(await user.unlock('CI-2', '1')).toEqual({ success: true });
  await stream.waitFor((event) => event.type === 'lock.state' && event.token === 'CI-2' && event.status === 'locked', 'the relock');
  return user;
}

describe('the /sim/v1 wire schemas', () => {
  it('describe every event a running simulator sends, and the dashboard parses each', async () => {
    const stream = await EventSocket.open(`${control}/events`);
    try {
      // An unlock that opens and relocks: command.sent, command.acked, lock.state, api.request.
      const user = await unlockAndWaitForRelock(stream);
      // Rejected: the lock is jammed.
      await user.unlock('CI-JAMMED', '1');
      await stream.waitFor((event) => event.type === 'command.rejected', 'a rejection');
      // A fault that drops the next command: fault.applied, then command.timeout.
      expect((await call('POST', '/stations/CI-1/faults', { kind: 'dropCommands', count: 1 })).status).toBe(201);
      await expect(user.unlock('CI-1', '1')).rejects.toMatchObject({ status: 504 }); // the outcome is unknown
      await stream.waitFor((event) => event.type === 'command.timeout', 'a timeout');
      await stream.waitFor((event) => event.type === 'fault.applied', 'the fault applied');
      // station.status and control.
      await call('POST', '/stations/CI-FLEET-01/connection', { online: false });
      await call('POST', '/stations/CI-FLEET-01/connection', { online: true });
      await stream.waitFor((event) => event.type === 'station.status' && event.token === 'CI-FLEET-01' && event.status === 'online', 'the station back');
      await stream.waitFor((event) => event.type === 'control', 'a control event');
      await stream.waitFor((event) => event.type === 'api.request', 'an API request');
      // broker.refused: an anonymous client on the authenticating embedded broker.
      await mqtt.connectAsync(sim.broker!.url, { reconnectPeriod: 0, clientId: 'anonymous' }, false).then(
        (client) => client.end(true),
        () => undefined,
      );
      await stream.waitFor((event) => event.type === 'broker.refused', 'a broker refusal');

      // judge.finding needs a sloppy backend on the broker: test/judge/sloppy-backend.test.ts holds it to the schema.
      expect(new Set(stream.events.map((event) => event.type))).toEqual(new Set(SIM_EVENT_TYPES.filter((type) => type !== 'judge.finding')));
      for (const event of stream.events) {
        const what = `${event.type} #${event.seq}`;
        expect(problems(SimEventMessageSchema, event), what).toEqual([]);
        expect(parseSimEvent(JSON.stringify(event)), what).toEqual(event);
      }
    } finally {
      stream.close();
    }
  });

  it('carry the lock phase of a real unlock on its lock states: opening, open, then none, in order', async () => {
    const stream = await EventSocket.open(`${control}/events`);
    try {
      await unlockAndWaitForRelock(stream);
      const phases = stream.events.flatMap((event) =>
        (event.type === 'command.acked' || event.type === 'lock.state') && event.token === 'CI-2' ? [[event.type, event.pending]] : [],
      );
      expect(phases).toEqual([
        ['command.acked', 'opening'],
        ['lock.state', 'open'],
        ['lock.state', null],
      ]);
    } finally {
      stream.close();
    }
  });

  it('describe every reply of the control plane', async () => {
    const health = await call('GET', '/health');
    expect(problems(HealthReplySchema, health.json)).toEqual([]);
    const list = await call('GET', '/stations');
    expect(problems(StationListReplySchema, list.json)).toEqual([]);
    const opened = await call('POST', '/stations/CI-1/locks/2/physical', { action: 'forceOpen' });
    expect(problems(SimStationSchema, opened.json)).toEqual([]);
    const fault = await call('POST', '/stations/CI-1/faults', { kind: 'latency', delayMs: 5, lockId: '2', probability: 0.5, count: 3 });
    expect(problems(FaultSchema, fault.json)).toEqual([]);
    const withFault = await call('GET', '/stations/CI-1');
    expect(problems(SimStationSchema, withFault.json)).toEqual([]);
    expect((withFault.json as { faults: unknown[] }).faults).toEqual([fault.json]);
    expect(problems(ClockReplySchema, (await call('GET', '/clock')).json)).toEqual([]);
    expect(problems(ResetReplySchema, (await call('POST', '/reset')).json)).toEqual([]);
  });

  it('are what /v1/openapi.json documents for /sim/v1', async () => {
    const document = (await (await fetch(`${sim.apiUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>;
    };
    const simPaths = Object.entries(document.paths).filter(([path]) => path.startsWith('/sim/v1/'));
    expect(simPaths.length).toBeGreaterThan(5);
    for (const [path, operations] of simPaths) {
      for (const [method, operation] of Object.entries(operations)) {
        const documented = Object.values(operation.responses).filter((response) => response.content !== undefined);
        expect(documented.length, `${method.toUpperCase()} ${path}`).toBeGreaterThan(0);
      }
    }
  });
});
