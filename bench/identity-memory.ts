/**
 * Memory of 10,000 per-station identities (identity.ts), and of 10,000 TLS secure contexts (what
 * 10,000 connected stations with distinct client certificates hold, one per TLS connection).
 * Run: node --expose-gc --import tsx bench/identity-memory.ts DIR   (DIR has certs/ca.crt and certs/stations/T0 to T99 .crt and .key)
 */
import tls from 'node:tls';
import { readFile } from 'node:fs/promises';
import { loadIdentities, type ConnectIdentity } from '../src/mqtt/identity.js';
const dir = process.argv[2]!;
const N = 10_000;
const gc = (globalThis as { gc?: () => void }).gc!;
const usage = () => { gc(); gc(); const m = process.memoryUsage(); return { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers }; };
const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
const diff = (a: ReturnType<typeof usage>, b: ReturnType<typeof usage>) => `rss +${mb(b.rss - a.rss)}, heap +${mb(b.heap - a.heap)}, external +${mb(b.external - a.external)}`;

const ids = await loadIdentities({ settings: { certs: 'certs', identities: { station: { password: { env: 'PW' } } } }, fixtureSource: `${dir}/fixture.json`, secure: true, env: { PW: 'x'.repeat(24) } });
const before = usage();
const held: ConnectIdentity[] = [];
for (let i = 0; i < N; i++) held.push(await ids.station(`T${i % 100}-${i}`));
const after = usage();
console.log(`10,000 station identities (templates, password, lazy certificate): ${diff(before, after)}; ${((after.heap - before.heap) / N).toFixed(0)} B heap each`);

// What one connection makes: a secure context from the CA and the station's own PEMs.
const ca = await readFile(`${dir}/ca.crt`, 'utf8');
const pems = await Promise.all(Array.from({ length: 100 }, async (_, i) => ({ cert: await readFile(`${dir}/certs/stations/T${i}.crt`, 'utf8'), key: await readFile(`${dir}/certs/stations/T${i}.key`, 'utf8') })));
const c0 = usage();
const contexts: tls.SecureContext[] = [];
for (let i = 0; i < N; i++) contexts.push(tls.createSecureContext({ ca, ...pems[i % 100]! }));
const c1 = usage();
console.log(`10,000 TLS secure contexts (CA + own certificate and key each): ${diff(c0, c1)}; ${((c1.rss - c0.rss) / N / 1024).toFixed(1)} KiB RSS each`);
const n0 = usage();
const noCa: tls.SecureContext[] = [];
for (let i = 0; i < N; i++) noCa.push(tls.createSecureContext({ ...pems[i % 100]! }));
const n1 = usage();
console.log(`10,000 secure contexts without a CA option (system roots, shared): ${diff(n0, n1)}; ${((n1.rss - n0.rss) / N / 1024).toFixed(1)} KiB RSS each`);
console.log(held.length, contexts.length, noCa.length);
