import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/start-simulator.js';

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
});
