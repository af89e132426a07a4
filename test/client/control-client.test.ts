/** The data layer against a fake control plane: real HTTP and a real WebSocket on port 0. */
import { createConnection, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ControlClient, ControlPlaneError, type StreamState } from '../../src/client/control-client.js';
import { eventually } from '../dashboard/terminal.js';
import { ManualClock, type Clock } from '../../src/shared/clock.js';
import type { SimEvent } from '../../src/client/sim-types.js';
import { makeStation, startFakeControlPlane, type FakeControlPlane } from '../dashboard/fake-control-plane.js';

let fake: FakeControlPlane | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await fake?.close();
  fake = undefined;
});

describe('ControlClient over HTTP', () => {
  it('calls every action of /sim/v1 with the control token', async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(1)], controlToken: 'secret' });
    const control = new ControlClient({ url: `${fake.url}/`, controlToken: 'secret' });

    expect(await control.health()).toEqual({ ready: true, stations: { total: 1, online: 1, offline: 0 } });
    expect((await control.setConnection('ST-1001', false)).status).toBe('offline');
    expect((await control.setBattery('ST-1001', 11.2)).batteryVoltage).toBe(11.2);
    await control.reboot('ST-1001');
    await control.reboot('ST-1001', 50);
    expect((await control.physical('ST-1001', '2', 'jam')).locks[1]!.status).toBe('jammed');
    expect((await control.station('ST-1001')).token).toBe('ST-1001');

    expect(fake.requests.map(({ method, url, body }) => ({ method, url, body }))).toEqual([
      { method: 'GET', url: '/sim/v1/health', body: undefined },
      { method: 'POST', url: '/sim/v1/stations/ST-1001/connection', body: { online: false } },
      { method: 'POST', url: '/sim/v1/stations/ST-1001/battery', body: { voltage: 11.2 } },
      { method: 'POST', url: '/sim/v1/stations/ST-1001/reboot', body: {} },
      { method: 'POST', url: '/sim/v1/stations/ST-1001/reboot', body: { downMs: 50 } },
      { method: 'POST', url: '/sim/v1/stations/ST-1001/locks/2/physical', body: { action: 'jam' } },
      { method: 'GET', url: '/sim/v1/stations/ST-1001', body: undefined },
    ]);
    expect(new Set(fake.requests.map((request) => request.authorization))).toEqual(new Set(['Bearer secret']));
  });

  it("keeps the station list's missing count, which says whether the list is the whole fleet", async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(1), makeStation(2)] });
    const control = new ControlClient({ url: fake.url });
    const all = await control.stations();
    expect(all.map((station) => station.token)).toEqual(['ST-1001', 'ST-1002']);
    expect(all.missing).toBe(0);
    fake.missingStations = 3; // a shard's process is down
    expect((await control.stations()).missing).toBe(3);
  });

  it('reads a 503 from health as not ready, and turns error answers into their message', async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(1)] });
    fake.health = { ready: false, stations: { total: 3, online: 1, offline: 0 } };
    const control = new ControlClient({ url: fake.url });
    expect(await control.health()).toMatchObject({ ready: false });

    await expect(control.setConnection('ST-404', false)).rejects.toThrow(new ControlPlaneError(404, 'Station not found'));
    fake.failNext(504, 'Station did not respond');
    await expect(control.reboot('ST-1001')).rejects.toMatchObject({ status: 504, message: 'Station did not respond' });
  });

  it('says so when the server cannot be reached', async () => {
    fake = await startFakeControlPlane({ stations: [] });
    const url = fake.url;
    await fake.close();
    fake = undefined;
    await expect(new ControlClient({ url }).health()).rejects.toMatchObject({ status: 0, message: expect.stringMatching(/cannot reach the control plane: ECONNREFUSED/) });
  });
});

describe('ControlClient event stream', () => {
  it('delivers the snapshot, then events in order', async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(1)] });
    const events: SimEvent[] = [];
    const subscription = new ControlClient({ url: fake.url }).subscribe({ onEvent: (event) => events.push(event) });
    cleanups.push(() => subscription.close());
    await fake.waitForConnections(1);
    fake.push({ type: 'command.sent', token: 'ST-1001', lockId: '1', commandId: 'c1' });
    fake.push({ type: 'not.a.known.type' } as never);
    fake.push({ type: 'command.acked', token: 'ST-1001', lockId: '1', commandId: 'c1', pending: 'opening', ms: 4 });
    await eventually(() => expect(events.map((event) => event.type)).toEqual(['snapshot', 'command.sent', 'command.acked']));
    expect(events.map((event) => event.seq)).toEqual([1, 2, 4]);
  });

  it('reconnects with backoff when the stream drops, starting again from a snapshot', async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(1)] });
    const events: SimEvent[] = [];
    const states: StreamState[] = [];
    const clock = new ManualClock();
    const subscription = new ControlClient({ url: fake.url, reconnectBaseMs: 20, random: () => 0, clock }).subscribe({
      onEvent: (event) => events.push(event),
      onState: (state) => states.push(state),
    });
    cleanups.push(() => subscription.close());
    await fake.waitForConnections(1);
    await eventually(() => expect(events).toHaveLength(1));

    fake.dropClients();
    await eventually(() => expect(states.at(-1)?.phase).toBe('waiting'));
    clock.advance(10);
    await fake.waitForConnections(2);
    await eventually(() => expect(events.map((event) => event.type)).toEqual(['snapshot', 'snapshot']));
    const waiting = states.find((state) => state.phase === 'waiting');
    // Equal jitter with random() = 0: half of the 20 ms base.
    expect(waiting).toMatchObject({ phase: 'waiting', retryInMs: 10 });
    expect(states.map((state) => state.phase)).toEqual(['connecting', 'open', 'waiting', 'connecting', 'open']);

    subscription.close();
    fake.dropClients();
    // Closed for good: once the stream has closed, no timer is left that could open a third
    // connection, however long we wait.
    await eventually(() => expect(clock.pending).toBe(0));
    expect(fake.clients).toBe(0);
    clock.advance(60_000);
    expect(states.map((state) => state.phase)).toEqual(['connecting', 'open', 'waiting', 'connecting', 'open', 'closed']);
  });

  it('backs off further with each failed attempt', async () => {
    fake = await startFakeControlPlane({ stations: [] });
    const url = fake.url;
    await fake.close();
    fake = undefined;
    const delays: number[] = [];
    const subscription = new ControlClient({ url, reconnectBaseMs: 5, reconnectMaxMs: 40, random: () => 0.999 }).subscribe({
      onEvent: () => undefined,
      onState: (state) => {
        if (state.phase === 'waiting') delays.push(state.retryInMs);
      },
    });
    cleanups.push(() => subscription.close());
    await eventually(() => expect(delays.length).toBeGreaterThanOrEqual(5));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 40]);
  });

  it('stops when the control token is refused', async () => {
    fake = await startFakeControlPlane({ stations: [], controlToken: 'right' });
    const states: StreamState[] = [];
    const clock = new ManualClock();
    const subscription = new ControlClient({ url: fake.url, controlToken: 'wrong', reconnectBaseMs: 5, clock }).subscribe({
      onEvent: () => undefined,
      onState: (state) => states.push(state),
    });
    cleanups.push(() => subscription.close());
    await eventually(() => expect(states.at(-1)).toEqual({ phase: 'refused', reason: 'Control token is invalid' }));
    // No timer is left to try again with, however long we wait.
    expect(clock.pending).toBe(0);
    clock.advance(60_000);
    expect(states.filter((state) => state.phase === 'connecting')).toHaveLength(1);
  });

  it('reports a URL the WebSocket cannot use as refused instead of throwing, with no credentials in the reason', () => {
    const states: StreamState[] = [];
    const subscription = new ControlClient({ url: 'localhost:8080' }).subscribe({ onEvent: () => undefined, onState: (state) => states.push(state) });
    cleanups.push(() => subscription.close());
    expect(states.map((state) => state.phase)).toEqual(['connecting', 'refused']);
    const reason = (states[1] as { reason: string }).reason;
    expect(reason).toMatch(/protocol/);
    expect(reason).not.toContain('localhost');

    const secret: StreamState[] = [];
    new ControlClient({ url: 'nope://user:NOT-A-REAL-SECRET@host' }).subscribe({ onEvent: () => undefined, onState: (state) => secret.push(state) }).close();
    expect(JSON.stringify(secret)).not.toContain('NOT-A-REAL-SECRET');
  });

  it('ends a connection whose pings go unanswered (a network partition) and reconnects', async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(1)] });
    const proxy = await startProxy(new URL(fake.url).port);
    cleanups.push(() => proxy.close());
    const events: SimEvent[] = [];
    const states: StreamState[] = [];
    // The connection's timers in fake time; `scheduled` is the length of each timer it sets.
    const manual = new ManualClock();
    const scheduled: number[] = [];
    const clock: Clock = {
      now: () => manual.now(),
      setTimeout: (callback, ms) => (scheduled.push(ms), manual.setTimeout(callback, ms)),
      clearTimeout: (handle) => manual.clearTimeout(handle),
    };
    const subscription = new ControlClient({ url: proxy.url, pingIntervalMs: 20, pongTimeoutMs: 50, reconnectBaseMs: 10, random: () => 0, clock }).subscribe({
      onEvent: (event) => events.push(event),
      onState: (state) => states.push(state),
    });
    cleanups.push(() => subscription.close());
    await eventually(() => expect(events).toHaveLength(1));
    // Pings come back while the network works: the connection stays. Each round, the ping goes
    // out (its 50 ms pong timeout starts) and its pong schedules the next ping in 20 ms.
    for (let round = 1; round <= 3; round += 1) {
      const before = scheduled.length;
      manual.advance(20);
      expect(scheduled.slice(before)).toEqual([50]);
      await eventually(() => expect(scheduled.slice(before)).toEqual([50, 20]), { what: `the pong of ping ${round}` });
    }
    expect(states.map((state) => state.phase)).toEqual(['connecting', 'open']);

    proxy.partition();
    manual.advance(20); // the ping that gets no answer
    manual.advance(50); // its pong timeout
    await eventually(() => expect(states.at(-1)?.phase).toBe('waiting'));
    manual.advance(5); // the reconnect: half of 10 ms with random() = 0
    await eventually(() => expect(states.map((state) => state.phase)).toEqual(['connecting', 'open', 'waiting', 'connecting', 'open']));
    expect(states[2]).toMatchObject({ phase: 'waiting', reason: 'no answer to a ping in 50 ms' });
    await eventually(() => expect(events.map((event) => event.type)).toEqual(['snapshot', 'snapshot']));
  });

  it('gives up an opening handshake that gets no answer, and tries again', async () => {
    // Accepts the TCP connection and never says a word.
    const silent = createServer(() => undefined);
    const sockets: Socket[] = [];
    silent.on('connection', (socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      for (const socket of sockets) socket.destroy();
      silent.close();
    });
    const { port } = silent.address() as { port: number };
    const states: StreamState[] = [];
    const subscription = new ControlClient({ url: `http://127.0.0.1:${port}`, handshakeTimeoutMs: 50, reconnectBaseMs: 10 }).subscribe({
      onEvent: () => undefined,
      onState: (state) => states.push(state),
    });
    cleanups.push(() => subscription.close());
    await eventually(() => expect(states.filter((state) => state.phase === 'connecting').length).toBeGreaterThanOrEqual(2));
    expect(states[1]).toMatchObject({ phase: 'waiting', reason: 'Opening handshake has timed out' });
  });
});

/** A TCP proxy to a local port whose connections so far can be cut off without a word, as a partition does. */
async function startProxy(port: string): Promise<{ url: string; partition(): void; close(): void }> {
  const pairs: [Socket, Socket][] = [];
  const all: Socket[] = [];
  const server = createServer((client) => {
    const upstream = createConnection(Number(port), '127.0.0.1');
    client.pipe(upstream).pipe(client);
    for (const end of [client, upstream]) {
      end.on('error', () => undefined);
      end.on('close', () => (end === client ? upstream : client).destroy());
    }
    pairs.push([client, upstream]);
    all.push(client, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => {
      for (const socket of all) socket.destroy();
      server.close();
    },
    partition: () => {
      // Nothing passes either way any more, and neither end is told.
      for (const [client, upstream] of pairs.splice(0)) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
  };
}

describe('ControlClient request timeout', () => {
  it('fails a request that gets no answer after requestTimeoutMs, on a timer of its own (not AbortSignal.timeout, which Node 20 can collect)', async () => {
    vi.useFakeTimers();
    try {
      const calls: AbortSignal[] = [];
      // A server that never answers: the fetch ends only when its signal aborts.
      const hangingFetch = ((_url: string, init: RequestInit) => {
        calls.push(init.signal!);
        return new Promise<Response>((_resolve, reject) => {
          init.signal!.addEventListener('abort', () => reject(init.signal!.reason), { once: true });
        });
      }) as unknown as typeof fetch;
      const control = new ControlClient({ url: 'http://127.0.0.1:9', fetch: hangingFetch, requestTimeoutMs: 60_000 });
      const settled = vi.fn();
      void control.simulatorClock().then(settled, settled);
      await vi.advanceTimersByTimeAsync(59_999);
      expect(settled).not.toHaveBeenCalled();
      // On the fake clock only: a timeout that is not the request's own timer never fires here.
      await vi.advanceTimersByTimeAsync(1);
      expect(settled).toHaveBeenCalledTimes(1);
      expect(settled.mock.calls[0]![0]).toMatchObject({ status: 0, message: 'cannot reach the control plane: no answer in time' });
      expect(calls).toHaveLength(1);
      // The next request is timed afresh, and close() still ends one in flight.
      const next = control.simulatorClock().catch((error: unknown) => error);
      control.close();
      expect(await next).toMatchObject({ status: 0, message: 'cannot reach the control plane: the connection was closed' });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('ControlClient for test suites', () => {
  it('takes the control URL as STATION_SIM_CONTROL_URL holds it, ending in /sim/v1', async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(1)] });
    expect((await new ControlClient({ url: `${fake.url}/sim/v1/` }).station('ST-1001')).token).toBe('ST-1001');
    expect(fake.requests.map((request) => request.url)).toEqual(['/sim/v1/stations/ST-1001']);
  });

  it('iterates the event stream from a real socket; close() ends an iterator still open', async () => {
    fake = await startFakeControlPlane({ stations: [makeStation(1)] });
    const control = new ControlClient({ url: fake.url });
    const events = control.events({ type: 'command.sent' });
    expect((await events.ready).map((station) => station.token)).toEqual(['ST-1001']);
    fake.push({ type: 'command.acked', token: 'ST-1001', lockId: '1', commandId: 'c0', pending: 'opening', ms: 1 });
    fake.push({ type: 'command.sent', token: 'ST-1001', lockId: '1', commandId: 'c1' });
    expect((await events.next()).value).toMatchObject({ type: 'command.sent', commandId: 'c1' });
    const waiting = events.next();
    control.close();
    expect(await waiting).toEqual({ done: true, value: undefined });
    await eventually(() => expect(fake!.clients).toBe(0));
  });

  it('reports a refused URL through the iterator, not as a throw', async () => {
    const events = new ControlClient({ url: 'localhost:8080' }).events();
    await expect(events.ready).rejects.toThrow(/^the event stream was refused: /);
    await expect(events.next()).rejects.toThrow(/^the event stream was refused: /);
  });
});
