/**
 * `stop()` ends everything promptly and once, whatever the clients are doing: a stream client that
 * stopped reading, a keep-alive connection whose request finished while the server was closing, or
 * a second `stop()` (a signal handler and an `afterAll`, say). Each test has a timeout well under
 * what the old behaviour took (30 s for ws's close timeout, 72 s for the keep-alive timeout).
 */
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startSimulator } from '../../src/simulator/start-simulator.js';
import { eventually } from '../helpers/eventually.js';

const ONE_STATION = { stations: [{ token: 'S', stationId: 1, locks: [{ lockId: '1' }] }] };

describe('stopping the simulator', () => {
  it('cuts off an event-stream client that stopped reading instead of waiting for its close frame', async () => {
    const sim = await startSimulator({ fixture: ONE_STATION });
    const socket = new WebSocket(`${sim.controlUrl!.replace(/^http/, 'ws')}/events`);
    await new Promise((resolve, reject) => {
      socket.once('message', resolve); // the snapshot
      socket.once('error', reject);
    });
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    // The client stops reading, as a hung dashboard or a paused debugger does.
    (socket as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    await sim.stop();
    (socket as unknown as { _socket: { resume(): void } })._socket.resume();
    // 1001 (going away) if the close frame got through, 1006 when the connection was cut.
    expect([1001, 1006]).toContain(await closed);
  }, 15_000);

  it('closes a keep-alive connection as soon as its request, still running at stop(), is answered', async () => {
    const sim = await startSimulator({ fixture: 'fixtures/ci.json', clock: 'manual' });
    const agent = new http.Agent({ keepAlive: true });
    try {
      const url = new URL(`${sim.controlUrl}/clock/advance`);
      const body = JSON.stringify({ ms: 600_000 }); // ten simulated minutes: a request that takes a while
      const start = sim.clock.now();
      const answered = new Promise<number>((resolve, reject) => {
        const request = http.request(
          { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
      // The advance is under way once simulated time has moved (it goes a minute at a time).
      await eventually(() => expect(sim.clock.now()).toBeGreaterThan(start), { what: 'the advance to start' });
      await sim.stop();
      expect(await answered).toBe(200);
    } finally {
      agent.destroy();
    }
  }, 20_000);

  it('a second stop() at the same time waits for the same shutdown', async () => {
    const sim = await startSimulator({ fixture: ONE_STATION });
    let firstDone = false;
    const first = sim.stop().then(() => {
      firstDone = true;
    });
    await sim.stop();
    expect(firstDone).toBe(true);
    await first;
    // Nothing left listening: the API port refuses connections.
    await expect(fetch(`${sim.apiUrl}/v1/stations/S`)).rejects.toThrow();
  });
});
