/**
 * The control token holds for every request the router sends to the control plane, however its
 * target is spelt (issue 15, item 1): percent-encoded characters, an absolute-form target, a query,
 * a path parameter, a trailing slash, dot segments, a WebSocket upgrade.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { rawRequest, requestText } from '../helpers/raw-http.js';

const controlToken = 'control-token-for-the-spelling-tests-0123';
let sim: StartedSimulator;
beforeAll(async () => {
  sim = await startSimulator({ fixture: 'ci', controlToken });
});
afterAll(async () => sim.stop());

/** Every way to write `path` that a client might try: each character percent-encoded, and more. */
function spellings(path: string): string[] {
  const found = new Set<string>([path]);
  const encode = (c: string): string => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  for (let i = 0; i < path.length; i += 1) {
    const c = path[i]!;
    found.add(`${path.slice(0, i)}${encode(c).toUpperCase()}${path.slice(i + 1)}`);
    found.add(`${path.slice(0, i)}${encode(c)}${path.slice(i + 1)}`);
  }
  found.add([...path].map((c) => (c === '/' ? c : encode(c))).join(''));
  for (const prefix of ['http://example.com', 'HTTP://EXAMPLE.COM:80', 'http://127.0.0.1:1', 'https://user:pw@example.com']) found.add(`${prefix}${path}`);
  for (const suffix of ['?', '?x=1', ';x', '/', '#f', '%3Fx', '%23f']) found.add(`${path}${suffix}`);
  found.add(path.replace('/sim/', '/sim/./'));
  found.add(path.replace('/sim/', '/sim//'));
  found.add(path.replace('/v1/', '/v1//'));
  found.add(`/x/..${path}`);
  found.add(`/%2e%2e${path}`);
  found.add(path.replace('/v1/', '/v1/x/../'));
  found.add(path.replace('/sim/', '/SIM/'));
  return [...found];
}

interface Probe {
  method: 'GET' | 'POST';
  path: string;
  headers?: string[];
  body?: string;
}

const upgrade = ['Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13'];

const probes: Probe[] = [
  { method: 'GET', path: '/sim/v1/health' },
  { method: 'GET', path: '/sim/v1/stations/CI-1' },
  { method: 'POST', path: '/sim/v1/reset' },
  { method: 'POST', path: '/sim/v1/stations/CI-1/locks/1/physical', headers: ['Content-Type: application/json'], body: '{"action":"forceOpen"}' },
  { method: 'GET', path: '/sim/v1/events', headers: upgrade },
  { method: 'GET', path: '/sim/v1/no-such-route' },
];

function send(probe: Probe, target: string, withToken: boolean): Promise<{ status: number; body: string }> {
  const headers = [...(probe.headers ?? []), ...(withToken ? [`Authorization: Bearer ${controlToken}`] : [])];
  // An upgrade request must not also say `Connection: close`.
  const text = requestText(probe.method, target, headers, probe.body ?? '');
  return rawRequest(sim.apiUrl!, probe.headers === upgrade ? text.replace('Connection: close\r\n', '') : text);
}

describe('/sim/v1 behind a control token', () => {
  it('refuses every spelling of every control route without the token, and routes the same spellings with it', async () => {
    const refusedWithout = new Map<string, number>();
    for (const probe of probes) {
      for (const target of spellings(probe.path)) {
        const answer = await send(probe, target, false);
        refusedWithout.set(`${probe.method} ${target}`, answer.status);
        // 401 when the router sends it to the control plane, else the root's 404 (or 400 for a
        // target it cannot parse): never an answer from the control plane itself.
        expect([400, 401, 404], `${probe.method} ${target}: ${answer.body}`).toContain(answer.status);
        if (answer.status !== 401) expect(JSON.parse(answer.body), `${probe.method} ${target}`).toHaveProperty('message');
      }
    }
    // Nothing happened: no lock was forced open by any spelling.
    expect(sim.fleet.get('CI-1')!.model.snapshot().locks.find((lock) => lock.lockId === '1')!.status).toBe('locked');

    let routed = 0;
    for (const probe of probes) {
      for (const target of spellings(probe.path)) {
        const answer = await send(probe, target, true);
        // An unknown route's 404 under /sim/v1 looks like the root's: only known routes count here.
        if (probe.path.endsWith('no-such-route')) continue;
        if (answer.status !== (probe.headers === upgrade ? 101 : 200)) continue;
        routed += 1;
        // Whatever the router sends to the control plane with the token was refused without it.
        expect(refusedWithout.get(`${probe.method} ${target}`), `${probe.method} ${target}`).toBe(401);
      }
    }
    // The router decodes percent-encoding and takes absolute-form targets, so most spellings route:
    // the check above covered them, not just the plain paths.
    const plainPathCharacters = probes.reduce((sum, probe) => sum + probe.path.length, 0);
    expect(routed).toBeGreaterThan(plainPathCharacters);
    // Unknown routes under /sim/v1 are behind the token too, so a 404 tells no caller without it
    // which routes exist, whatever the spelling.
    for (const target of ['/sim/v1/no-such-route', '/%73im/v1/no-such-route', 'http://example.com/sim/v1/no-such-route', '/sim/%761/no-such-route']) {
      expect(refusedWithout.get(`GET ${target}`), target).toBe(401);
    }
  }, 120_000);
});
