import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { startApiProcess, startSimulator } from '../../src/simulator/start-simulator.js';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';

describe('event stream back-pressure', () => {
  it('drops a client that stops reading with close code 1013 instead of buffering without bound', async () => {
    const sim = await startSimulator({ fixture: { stations: [{ token: 'S', stationId: 1, locks: [{ lockId: '1' }] }] } });
    try {
      const socket = new WebSocket(`${sim.controlUrl!.replace(/^http/, 'ws')}/events`);
      await new Promise((resolve, reject) => {
        socket.once('message', resolve); // the snapshot
        socket.once('error', reject);
      });
      // Stop reading: the server's buffer for this client can only grow from here.
      (socket as unknown as { _socket: { pause(): void } })._socket.pause();
      const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
      const hub = sim.http!.control.hub;
      const padding = 'x'.repeat(1000);
      for (let i = 0; i < 20_000; i += 1) {
        hub.emit({ type: 'control', action: `flood ${i} ${padding}` });
        if (i % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      (socket as unknown as { _socket: { resume(): void } })._socket.resume();
      expect(await closed).toBe(1013);
    } finally {
      await sim.stop();
    }
  });

  it('drops a client with 1013 when the events held back while its snapshot is gathered pass the bound', async () => {
    // No fleet process on this broker: the snapshot waits 5 s for one, while events keep coming.
    const broker = await startEmbeddedBroker({ port: 0 });
    const api = await startApiProcess({ fixture: 'fixtures/ci.json', broker: broker.url });
    try {
      const socket = new WebSocket(`${api.controlUrl.replace(/^http/, 'ws')}/events`);
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
      });
      const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
      const started = Date.now();
      const padding = 'x'.repeat(1000);
      // 40 MB of events against the default bound of 32 × 1 MiB.
      for (let i = 0; i < 40_000; i += 1) {
        api.control.hub.emit({ type: 'control', action: `flood ${i} ${padding}` });
        if (i % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      expect(await closed).toEqual({ code: 1013, reason: 'too many events while the snapshot was gathered' });
      // Dropped for the events, not for the missing fleet (1011 after 5 s).
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await api.stop();
      await broker.stop();
    }
  }, 20_000);
});
