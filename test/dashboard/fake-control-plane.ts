/**
 * A small stand-in for the `/sim/v1` control plane (docs/control-plane.md): real HTTP and a real
 * WebSocket event stream on port 0, serving a snapshot, pushing whatever events a test gives it,
 * and recording every request.
 */
import Fastify from 'fastify';
import websocket from '@fastify/websocket';
import type { WebSocket } from 'ws';
import type { SimEvent, SimHealth, SimStation } from '../../src/client/sim-types.js';
import type { DashboardControl } from '../../src/client/control-client.js';

export interface RecordedRequest {
  method: string;
  url: string;
  body: unknown;
  authorization: string | undefined;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as a test writes it: `seq` is added per connection, `time` defaults to now. */
export type EventInput = DistributiveOmit<SimEvent, 'seq' | 'time'> & { time?: string };

export interface FakeControlPlane {
  /** Base URL of the HTTP server (without `/sim/v1`). */
  url: string;
  requests: RecordedRequest[];
  stations: Map<string, SimStation>;
  /** What `/sim/v1/health` answers; change it to move the progress along. */
  health: SimHealth;
  /** The `/v1` faults in force, as `GET /sim/v1/api-faults` lists them. */
  apiFaults: Record<string, unknown>[];
  /** The `missing` of `GET /sim/v1/stations`: fixture stations no fleet process answered for. */
  missingStations: number;
  /** What `/sim/v1/clock` answers; real time, not manual, when unset. */
  simulatorClock: { now: string; manual: boolean } | undefined;
  /** The next action (POST) fails with this status and message. */
  failNext(status: number, message: string): void;
  push(event: EventInput): void;
  /** Connected event-stream clients. */
  readonly clients: number;
  /** Drops every event-stream client, as a crashed server or a broken network would. */
  dropClients(): void;
  /** Resolves once `count` clients have connected in total since start. */
  waitForConnections(count: number): Promise<void>;
  close(): Promise<void>;
}

export interface FakeControlPlaneOptions {
  stations: SimStation[];
  controlToken?: string;
}

export function makeStation(index: number, overrides: Partial<SimStation> = {}): SimStation {
  const stationId = 1000 + index;
  return {
    token: `ST-${stationId}`,
    stationId,
    status: 'online',
    batteryVoltage: 12.41,
    lastConnection: '2026-11-22T08:18:04.637Z',
    battery: { drainPerUnlockV: 0.01, drainPerHourV: 0.005, cutoffV: 11.5 },
    locks: [
      { lockId: '1', status: 'locked', lastUpdated: '2026-11-22T08:18:04.637Z', pending: null },
      { lockId: '2', status: 'locked', lastUpdated: '2026-11-22T08:18:04.637Z', pending: null },
    ],
    faults: [],
    timers: [],
    ...overrides,
  };
}

export async function startFakeControlPlane(options: FakeControlPlaneOptions): Promise<FakeControlPlane> {
  const app = Fastify();
  await app.register(websocket);
  const stations = new Map(options.stations.map((station) => [station.token, station]));
  const requests: RecordedRequest[] = [];
  const sockets = new Map<WebSocket, { seq: number }>();
  let connections = 0;
  const connectionWaiters: { count: number; resolve: () => void }[] = [];
  let failure: { status: number; message: string } | undefined;
  const total = options.stations.length;
  // Events are stamped with the simulator's time (docs/control-plane.md), the fake's clock if set.
  const eventTime = (): string => fake.simulatorClock?.now ?? new Date().toISOString();
  const fake: FakeControlPlane = {
    url: '',
    requests,
    stations,
    health: { ready: true, stations: { total, online: total, offline: 0 } },
    simulatorClock: undefined,
    missingStations: 0,
    apiFaults: [],
    failNext: (status, message) => {
      failure = { status, message };
    },
    push: (event) => {
      for (const [socket, state] of sockets) {
        state.seq += 1;
        socket.send(JSON.stringify({ seq: state.seq, time: eventTime(), ...event }));
      }
    },
    get clients() {
      return sockets.size;
    },
    dropClients: () => {
      for (const socket of sockets.keys()) socket.terminate();
      sockets.clear();
    },
    waitForConnections: (count) =>
      connections >= count ? Promise.resolve() : new Promise((resolve) => connectionWaiters.push({ count, resolve })),
    close: async () => {
      fake.dropClients();
      await app.close();
    },
  };

  const record = (request: { method: string; url: string; body?: unknown; headers: { authorization?: string } }): void => {
    requests.push({ method: request.method, url: request.url, body: request.body, authorization: request.headers.authorization });
  };
  app.addHook('onRequest', async (request, reply) => {
    if (options.controlToken !== undefined && request.headers.authorization !== `Bearer ${options.controlToken}`) {
      record(request);
      return reply.code(401).send({ message: 'Control token is invalid' });
    }
  });
  // After the body is parsed, so the record has it.
  app.addHook('preHandler', async (request) => record(request));

  const station = (token: string): SimStation => {
    const found = stations.get(token);
    if (!found) throw Object.assign(new Error('Station not found'), { statusCode: 404 });
    return found;
  };
  // Actions answer like the real control plane: the station as it now is, or `{message}`.
  const act = (token: string, change: (current: SimStation) => SimStation): SimStation => {
    if (failure) {
      const { status, message } = failure;
      failure = undefined;
      throw Object.assign(new Error(message), { statusCode: status });
    }
    const next = change(station(token));
    stations.set(token, next);
    return next;
  };
  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
    void reply.code(error.statusCode ?? 500).send({ message: error.message });
  });

  type TokenParams = { Params: { token: string } };
  app.get('/sim/v1/health', async (_request, reply) => reply.code(fake.health.ready ? 200 : 503).send(fake.health));
  app.get('/sim/v1/clock', async () => fake.simulatorClock ?? { now: new Date().toISOString(), manual: false });
  app.get('/sim/v1/stations', async () => ({ stations: [...stations.values()], missing: fake.missingStations }));
  app.get<TokenParams>('/sim/v1/stations/:token', async (request) => station(request.params.token));
  app.post<TokenParams & { Body: { online: boolean } }>('/sim/v1/stations/:token/connection', async (request) =>
    act(request.params.token, (current) => ({ ...current, status: request.body.online ? 'online' : 'offline' })),
  );
  app.post<TokenParams & { Body: { voltage: number } }>('/sim/v1/stations/:token/battery', async (request) =>
    act(request.params.token, (current) => ({ ...current, batteryVoltage: request.body.voltage })),
  );
  app.post<TokenParams>('/sim/v1/stations/:token/reboot', async (request) => act(request.params.token, (current) => current));
  app.post<{ Params: { token: string; lockId: string }; Body: { action: string } }>('/sim/v1/stations/:token/locks/:lockId/physical', async (request) =>
    act(request.params.token, (current) => ({
      ...current,
      locks: current.locks.map((lock) =>
        lock.lockId !== request.params.lockId ? lock : { ...lock, status: request.body.action === 'jam' ? 'jammed' : 'locked' },
      ),
    })),
  );
  let faultIds = 0;
  app.post<TokenParams & { Body: Record<string, unknown> }>('/sim/v1/stations/:token/faults', async (request, reply) => {
    const fault = { id: `f${++faultIds}`, ...request.body } as SimStation['faults'][number];
    act(request.params.token, (current) => ({ ...current, faults: [...current.faults, fault] }));
    return reply.code(201).send(fault);
  });
  app.delete<TokenParams>('/sim/v1/stations/:token/faults', async (request) => act(request.params.token, (current) => ({ ...current, faults: [] })));
  app.get('/sim/v1/api-faults', async () => ({ faults: fake.apiFaults }));
  app.post<{ Body: Record<string, unknown> }>('/sim/v1/api-faults', async (request, reply) => {
    const fault = { id: `api-${++faultIds}`, ...request.body, remaining: null };
    fake.apiFaults.push(fault);
    return reply.code(201).send(fault);
  });
  app.delete('/sim/v1/api-faults', async () => {
    const cleared = fake.apiFaults.length;
    fake.apiFaults = [];
    return { cleared };
  });
  app.get('/sim/v1/events', { websocket: true }, (socket: WebSocket) => {
    const state = { seq: 1 };
    sockets.set(socket, state);
    socket.on('close', () => sockets.delete(socket));
    socket.send(JSON.stringify({ seq: 1, time: eventTime(), type: 'snapshot', stations: [...stations.values()] }));
    connections += 1;
    for (const waiter of connectionWaiters.splice(0)) {
      if (connections >= waiter.count) waiter.resolve();
      else connectionWaiters.push(waiter);
    }
  });

  fake.url = await app.listen({ port: 0, host: '127.0.0.1' });
  return fake;
}

/** A control plane that answers at once from memory: these tests measure the screen, not HTTP. */
export function memoryControl(stations: SimStation[]): DashboardControl {
  const byToken = new Map(stations.map((station) => [station.token, station]));
  const refuse = async (): Promise<never> => {
    throw new Error('not used in this test');
  };
  return {
    health: async () => ({ ready: true, stations: { total: stations.length, online: stations.length, offline: 0 } }),
    station: async (token) => byToken.get(token) ?? refuse(),
    setConnection: refuse,
    setBattery: refuse,
    setLink: refuse,
    reboot: refuse,
    physical: refuse,
    addFault: refuse,
    clearFaults: refuse,
    addApiFault: refuse,
    apiFaults: async () => [],
    clearApiFaults: refuse,
    subscribe: (handlers) => {
      handlers.onState?.({ phase: 'open' });
      handlers.onEvent({ seq: 1, time: new Date().toISOString(), type: 'snapshot', stations });
      return { close: () => undefined };
    },
  };
}
