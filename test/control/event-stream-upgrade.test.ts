/**
 * The event stream's upgrade (issue 15, items 3 and 7): the control token as a header or, for
 * browsers, a subprotocol, never from the query; JSON answers for requests `ws` would refuse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { rawRequest } from '../helpers/raw-http.js';

const controlToken = 'control/token+for.the~stream_0123456789==';
const bearerProtocol = `station-sim.bearer.${Buffer.from(controlToken).toString('base64url')}`;
let sim: StartedSimulator;
beforeAll(async () => {
  sim = await startSimulator({ fixture: 'ci', controlToken });
});
afterAll(async () => sim.stop());

/** An upgrade request to `target` with the given extra header lines. */
function upgrade(target: string, headers: string[], key = 'dGhlIHNhbXBsZSBub25jZQ=='): string {
  return [`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: Upgrade', 'Upgrade: websocket', `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13', ...headers, '', ''].join('\r\n');
}

function openStream(protocols: string[], headers: Record<string, string> = {}): Promise<WebSocket> {
  const socket = new WebSocket(`${sim.controlUrl!.replace(/^http/, 'ws')}/events`, protocols, { headers });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
    socket.once('error', reject);
  });
}

describe('/sim/v1/events behind a control token', () => {
  it('takes the token as a subprotocol, as a browser sends it, and selects the stream protocol without echoing the token', async () => {
    const socket = await openStream(['station-sim.events', bearerProtocol]);
    try {
      expect(socket.protocol).toBe('station-sim.events');
      const first = await new Promise<{ type: string }>((resolve) => socket.once('message', (data) => resolve(JSON.parse(data.toString()))));
      expect(first.type).toBe('snapshot');
    } finally {
      socket.close();
    }
  });

  it('takes the token in the Authorization header', async () => {
    const socket = await openStream([], { authorization: `Bearer ${controlToken}` });
    socket.close();
    expect(socket.protocol).toBe('');
  });

  it('refuses the stream without the token, with a wrong one, and with the token in the query', async () => {
    await expect(openStream([])).rejects.toThrow('HTTP 401');
    await expect(openStream(['station-sim.events', `station-sim.bearer.${Buffer.from('wrong').toString('base64url')}`])).rejects.toThrow('HTTP 401');
    const query = await rawRequest(sim.apiUrl!, upgrade(`/sim/v1/events?token=${encodeURIComponent(controlToken)}`, []));
    expect(query.status).toBe(401);
    expect(JSON.parse(query.body)).toEqual({ message: 'Control token is invalid' });
  });

  it('answers a plain GET with 426 and requests ws would refuse with 400, each in JSON', async () => {
    const auth = `Authorization: Bearer ${controlToken}`;
    const plain = await rawRequest(sim.apiUrl!, `GET /sim/v1/events HTTP/1.1\r\nHost: x\r\n${auth}\r\nConnection: close\r\n\r\n`);
    expect(plain.status).toBe(426);
    expect(plain.headers.upgrade).toBe('websocket');
    expect(JSON.parse(plain.body)).toEqual({ message: 'This route is a WebSocket: send an upgrade request' });

    const cases: [string, string][] = [
      [upgrade('/sim/v1/events', [auth], 'not-a-key'), 'Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455, section 4.1)'],
      [upgrade('/sim/v1/events', [auth]).replace('Version: 13', 'Version: 7'), 'Sec-WebSocket-Version must be 13'],
      [upgrade('/sim/v1/events', [auth, 'Sec-WebSocket-Protocol: a b, c']), 'Sec-WebSocket-Protocol must be a comma-separated list of distinct tokens'],
      [upgrade('/v1/stations/CI-1', []), 'This route does not take a WebSocket upgrade'],
    ];
    for (const [request, message] of cases) {
      const answer = await rawRequest(sim.apiUrl!, request);
      expect(answer.status, message).toBe(400);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(answer.body)).toEqual({ message });
    }
  });
});
