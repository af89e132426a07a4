/**
 * Station reads during a login flood, in one process through fastify `inject` (no sockets, so what
 * is measured is the competition for the CPU between scrypt on libuv's thread pool and the event
 * loop): station GETs in a closed loop, alone and beside wrong logins from several client
 * addresses, with the password checks bounded (the default: one at a time, 32 waiting) and
 * unbounded (four at once, libuv's pool, with no limit on waiting: as before the bound), with and
 * without the throttle. Also times a real login from a clean address in the middle of each flood.
 *
 *   npx tsx bench/login-flood.ts [--seconds 10] [--rate 43] [--addresses 8] [--readers 8]
 *
 * Bounded: each phase lasts `seconds` (at most 120), the flood sends at most rate × seconds
 * logins, the readers stop at the end of the phase, and whatever is still in flight is waited for.
 */
import { parseArgs } from 'node:util';
import { parseFixture } from '../src/fixture/load-fixture.js';
import { buildApi } from '../src/service/build-api.js';
import type { Station } from '../src/service/http/api-schemas.js';
import type { StationGateway } from '../src/service/station-gateway.js';
import { round, summarizeLatencies } from './lib/stats.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string' }, rate: { type: 'string' }, addresses: { type: 'string' }, readers: { type: 'string' } },
});
const seconds = Math.min(120, Number(values.seconds ?? 10));
const rate = Number(values.rate ?? 43);
const addresses = Math.max(1, Math.min(250, Number(values.addresses ?? 8)));
const readers = Math.max(1, Math.min(64, Number(values.readers ?? 8)));
const ACCOUNT = { email: 'reader@example.com', password: 'reader-password' };

const STATION: Station = {
  stationId: 1,
  batteryVoltage: 12.6,
  lastConnection: '2026-01-01T00:00:00.000Z',
  status: 'online',
  locks: [{ lockId: '1', status: 'locked', lastUpdated: '2026-01-01T00:00:00.000Z' }],
};
const gateway: StationGateway = {
  getStation: (token) => (token === 'R-1' ? STATION : undefined),
  unlock: async () => ({ success: true }),
};

interface Phase {
  name: string;
  flood: boolean;
  /** The fixture's `api`, as a file would say it (validated, with the defaults put in). */
  api: Record<string, unknown>;
}

const unthrottled = { enabled: false };
const PHASES: Phase[] = [
  { name: 'no flood', flood: false, api: {} },
  { name: 'flood, throttle off, checks unbounded (4 at once, no queue limit)', flood: true, api: { loginThrottle: unthrottled, passwordHashing: { concurrency: 4, maxQueued: 100_000 } } },
  { name: 'flood, throttle off, checks bounded (1 at once, 32 waiting)', flood: true, api: { loginThrottle: unthrottled } },
  { name: 'flood, throttle on, checks bounded (the defaults)', flood: true, api: {} },
];

async function runPhase(phase: Phase): Promise<void> {
  const fixture = parseFixture({
    api: phase.api,
    accounts: [{ ...ACCOUNT, stations: ['R-1'] }],
    stations: [{ token: 'R-1', stationId: 1, locks: [{ lockId: '1' }] }],
  });
  const app = await buildApi({ fixture, gateway, env: {} });
  const login = (remoteAddress: string, body: object) =>
    app.inject({ method: 'POST', url: '/v1/auth/login', remoteAddress, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  try {
    const token = (await login('127.0.0.1', ACCOUNT)).json<{ accessToken: string }>().accessToken;
    const endAt = performance.now() + seconds * 1000;
    const reads: number[] = [];
    const reader = async (): Promise<void> => {
      while (performance.now() < endAt) {
        const startedAt = performance.now();
        await app.inject({ method: 'GET', url: '/v1/stations/R-1', headers: { authorization: `Bearer ${token}` } });
        reads.push(performance.now() - startedAt);
        // inject answers without going through the event loop's poll phase; without a turn of the
        // loop here, the flood's timer would never fire.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const statuses: Record<string, number> = {};
    const inFlight: Promise<void>[] = [];
    let floodTimer: NodeJS.Timeout | undefined;
    if (phase.flood) {
      const total = Math.floor(rate * seconds);
      const startedAt = performance.now();
      let sent = 0;
      floodTimer = setInterval(() => {
        const due = Math.min(total, Math.floor(((performance.now() - startedAt) / 1000) * rate));
        for (; sent < due; sent += 1) {
          const n = sent;
          inFlight.push(
            login(`10.0.${n % addresses}.1`, { email: `flood-${n}@example.com`, password: 'wrong-guess' }).then((response) => {
              statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
            }),
          );
        }
        if (sent >= total) clearInterval(floodTimer);
      }, 10);
    }
    // A real login from a clean address halfway through.
    const real = new Promise<{ status: number; ms: number }>((resolve) =>
      setTimeout(async () => {
        const startedAt = performance.now();
        const response = await login('192.0.2.200', ACCOUNT);
        resolve({ status: response.statusCode, ms: performance.now() - startedAt });
      }, (seconds * 1000) / 2),
    );
    await Promise.all(Array.from({ length: readers }, reader));
    clearInterval(floodTimer);
    const realLogin = await real;
    await Promise.all(inFlight);
    const summary = summarizeLatencies(reads);
    process.stdout.write(
      `| ${phase.name} | ${round(reads.length / seconds, 0)} | ${round(summary.p50, 2)} / ${round(summary.p99, 2)} ms | ` +
        `${phase.flood ? Object.entries(statuses).map(([status, count]) => `${status} ×${count}`).join(', ') : '–'} | ${realLogin.status} in ${round(realLogin.ms, 0)} ms |\n`,
    );
  } finally {
    await app.close();
  }
}

process.stdout.write(
  `Station GETs by ${readers} readers through inject, ${seconds} s a phase; flood ${rate} wrong logins/s from ${addresses} addresses.\n\n` +
    '| phase | reads/s | read p50 / p99 | flood answers | real login |\n| --- | --- | --- | --- | --- |\n',
);
for (const phase of PHASES) await runPhase(phase);
