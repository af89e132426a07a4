/**
 * What one client can hold of the HTTP server, and the answers Node would otherwise give on its own
 * (issue 15, items 2 to 4; docs/api.md, section 8). Real sockets: these are about connections.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { buildTestApi, type TestApi } from '../../helpers/test-api.js';
import { rawRequest, requestText } from '../../helpers/raw-http.js';
import { eventually } from '../../helpers/eventually.js';

const execFileAsync = promisify(execFile);

let api: TestApi;
let url: string;
beforeAll(async () => {
  api = await buildTestApi({ api: { limits: { requestTimeoutMs: 1000, headersTimeoutMs: 1000, maxConnectionsPerClient: 3, maxConnections: 2048 } } });
  url = await api.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => api.app.close());

const json = 'application/json; charset=utf-8';

function openSocket(): Promise<net.Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('timeouts', () => {
  it('answers a body that stops short of its Content-Length with 408 in JSON once the request time is up', async () => {
    const started = Date.now();
    const answer = await rawRequest(url, 'POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email"', 10_000);
    expect(answer.status).toBe(408);
    expect(answer.headers['content-type']).toBe(json);
    expect(JSON.parse(answer.body)).toEqual({ message: 'Request timeout' });
    // 1 s of request time, checked every 0.5 s; far from the 10 s the client would wait.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('answers headers that never end with 408 in JSON', async () => {
    const answer = await rawRequest(url, 'GET /v1/stations/ST-1 HTTP/1.1\r\nHost: x\r\n', 10_000);
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toEqual({ message: 'Request timeout' });
  });
});

describe('connections per client', () => {
  it('answers a request on a connection over the per-client limit with 429, and takes new ones once others close', async () => {
    const held = await Promise.all([openSocket(), openSocket(), openSocket()]);
    try {
      const refused = await rawRequest(url, requestText('GET', '/v1/stations/ST-1'));
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(JSON.parse(refused.body)).toEqual({ message: 'Too many connections from this address (at most 3)' });
    } finally {
      for (const socket of held) socket.destroy();
    }
    await eventually(async () => expect((await rawRequest(url, requestText('GET', '/v1/stations/ST-1'))).status).toBe(401));
  });
});

describe('a body the server does not read', () => {
  it('lets the client read its 413 rather than fail while it still writes', async () => {
    // The client runs in a process of its own: in this one the server reads while the client
    // writes, and the race that cut the connection under the client's write does not happen.
    const client = `
      const body = JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(5 * 1024 * 1024) });
      const outcomes = [];
      for (let i = 0; i < 20; i += 1) {
        try {
          const response = await fetch(process.argv[1] + '/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          outcomes.push(response.status + ' ' + (await response.text()));
        } catch (error) {
          outcomes.push('failed: ' + (error.cause?.code ?? error.message));
        }
      }
      console.log(JSON.stringify(outcomes));`;
    // A server of its own, with the default per-client limit: a body still being drained holds its
    // connection, and fetch opens another for the next request, so with a limit of 3 a loaded
    // machine answers some of these 429, rightly.
    const own = await buildTestApi();
    try {
      const ownUrl = await own.app.listen({ port: 0, host: '127.0.0.1' });
      const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', client, ownUrl], { timeout: 60_000 });
      expect(JSON.parse(stdout)).toEqual(Array(20).fill('413 {"message":"Request body is too large"}'));
    } finally {
      await own.app.close();
    }
  });
});

describe('a body the server does not read, past the 16 MiB it discards', () => {
  /**
   * Sends `Content-Length: 1 GiB` and then the body in 1 MiB pieces, each once the socket has
   * room, up to `maxBytes`: resolves with what was written when the connection ended, and the
   * answer it got.
   */
  function sendHugeBody(target: string, maxBytes: number): Promise<{ written: number; closedByServer: boolean; answer: string }> {
    const { port } = new URL(target);
    const piece = Buffer.alloc(1024 * 1024, 0x61);
    return new Promise((resolve) => {
      let written = 0;
      let answer = '';
      let done = false;
      const socket = net.connect(Number(port), '127.0.0.1');
      const finish = (closedByServer: boolean): void => {
        if (done) return;
        done = true;
        socket.destroy();
        resolve({ written, closedByServer, answer });
      };
      const write = (): void => {
        while (!done && written < maxBytes) {
          written += piece.length;
          if (!socket.write(piece)) return void socket.once('drain', write);
        }
        // Everything sent and the connection still open: the server read it all.
        if (!done) setImmediate(() => finish(false));
      };
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      socket.on('error', () => finish(true));
      socket.on('close', () => finish(true));
      socket.on('connect', () => {
        socket.write(`POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 ** 3}\r\n\r\n`);
        write();
      });
    });
  }

  it('closes the connection once it has discarded 16 MiB, rather than read the whole body', async () => {
    const own = await buildTestApi();
    try {
      const ownUrl = await own.app.listen({ port: 0, host: '127.0.0.1' });
      // 64 MiB at most: four times the cap, far more than loopback's socket buffers hold.
      const outcome = await sendHugeBody(ownUrl, 64 * 1024 * 1024);
      expect(outcome.answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(outcome.closedByServer).toBe(true);
      // The cap, plus what the two socket buffers held when the server closed.
      expect(outcome.written).toBeLessThan(48 * 1024 * 1024);
    } finally {
      await own.app.close();
    }
  });
});

describe('inject()', () => {
  it('leaves a request without a real connection alone: nothing to drain, no stand-in socket to cut', async () => {
    const injected = await buildTestApi();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const refused = await injected.app.inject({ method: 'POST', url: '/v1/auth/login', headers: { 'content-type': 'text/plain' }, payload: 'x'.repeat(100) });
      expect(refused.statusCode).toBe(415);
      // A drain timer would fire here and call destroy() on light-my-request's socket, which has none.
      expect(() => vi.advanceTimersByTime(60_000)).not.toThrow();
    } finally {
      vi.useRealTimers();
      await injected.app.close();
    }
  });
});

describe('requests that are ambiguous or that Node would answer on its own', () => {
  const login = JSON.stringify({ email: 'nobody@example.com', password: 'wrong' });
  const cases: [string, string, number, string][] = [
    ['an HTTP/1.1 request without Host', 'GET /v1/stations/ST-1 HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'The Host header is required'],
    ['two Authorization headers', requestText('GET', '/v1/stations/ST-1', ['Authorization: Bearer a', 'authorization: Bearer b']), 400, 'The authorization header must not be given more than once'],
    ['two Host headers', 'GET /v1/stations/ST-1 HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n', 400, 'The Host header must not be given more than once'],
    ['a gzip body', requestText('POST', '/v1/auth/login', ['Content-Type: application/json', 'Content-Encoding: gzip'], login), 415, 'Content-Encoding is not supported: send the body uncompressed'],
    ['a UTF-16 body', requestText('POST', '/v1/auth/login', ['Content-Type: application/json; charset=utf-16'], login), 415, 'Request body must be JSON in UTF-8'],
    ['Expect: foo', requestText('POST', '/v1/auth/login', ['Content-Type: application/json', 'Expect: foo'], login), 417, 'Only "Expect: 100-continue" is supported'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405, 'CONNECT is not supported: this server is not a proxy'],
  ];

  it.each(cases)('answers %s with a JSON message', async (_name, request, status, message) => {
    const answer = await rawRequest(url, request);
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toBe(json);
    expect(JSON.parse(answer.body)).toEqual({ message });
  });

  it('still reads UTF-8 bodies however the charset is spelt, and Content-Encoding: identity', async () => {
    for (const headers of [['Content-Type: application/json; charset="UTF-8"'], ['Content-Type: application/json;charset=utf8'], ['Content-Type: application/json', 'Content-Encoding: identity']]) {
      const answer = await rawRequest(url, requestText('POST', '/v1/auth/login', headers, login));
      expect(answer.status, headers.join()).toBe(401);
      expect(JSON.parse(answer.body)).toEqual({ message: 'Invalid credentials' });
    }
  });
});
