/**
 * `station-sim certs` (docs/mqtt-security.md): the folder's layout and modes, certificates that
 * OpenSSL verifies against the CA for their purpose, idempotent re-runs, revocation through the
 * CRL, and one clear line for each thing that cannot work.
 */
import { spawnSync } from 'node:child_process';
import { X509Certificate, createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateTestPki } from '../../src/certs/test-pki.js';
import { runCliInProcess } from '../helpers/cli-process.js';

const TOKENS = ['ST-1', 'ST-2', 'ST-3'];

async function fixtureWith(dir: string, tokens: readonly string[]): Promise<string> {
  const path = join(dir, 'fixture.json');
  await writeFile(path, JSON.stringify({ stations: tokens.map((token, index) => ({ token, stationId: index + 1, locks: [{ lockId: '1' }] })) }));
  return path;
}

/** Every file under `dir` with its SHA-256 and mode. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const walk = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) await walk(path);
      else files[relative(dir, path)] = `${createHash('sha256').update(await readFile(path)).digest('hex')} ${((await stat(path)).mode & 0o777).toString(8)}`;
    }
  };
  await walk(dir);
  return files;
}

function openssl(args: string[]): { status: number | null; output: string } {
  const run = spawnSync('openssl', args, { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}

describe('station-sim certs', () => {
  it('makes the folder of docs/mqtt-security.md, keys 0600, and a re-run changes no byte', async () => {
    const work = await mkdtemp(join(tmpdir(), 'certs-'));
    const out = join(work, 'certs');
    const fixture = await fixtureWith(work, TOKENS);
    const first = await runCliInProcess(['certs', '--fixture', fixture, '--out', out, '--host', 'broker.example', '--host', '10.0.0.7']);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toBe(`station-sim certs: ${out}: new CA, 8 certificates issued, 0 kept\n`);

    const files = await snapshot(out);
    const stems = ['ca', 'server', 'service', 'control', 'agent', 'observer', 'stations/ST-1', 'stations/ST-2', 'stations/ST-3'];
    expect(Object.keys(files).sort()).toEqual([...stems.flatMap((stem) => [`${stem}.crt`, `${stem}.key`]), 'crl.pem', 'index.json'].sort());
    for (const [name, summary] of Object.entries(files)) expect(summary.split(' ')[1], name).toBe(name.endsWith('.key') ? '600' : '644');
    for (const stem of stems) expect(await readFile(join(out, `${stem}.key`), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);

    const cn = (stem: string) => new X509Certificate(readFileSyncText(join(out, `${stem}.crt`))).subject;
    expect(['service', 'control', 'observer', 'stations/ST-2'].map(cn)).toEqual(['CN=station-sim-service', 'CN=station-sim-control', 'CN=station-sim-observer', 'CN=ST-2']);
    const server = new X509Certificate(readFileSyncText(join(out, 'server.crt')));
    expect(server.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:broker.example, IP Address:10.0.0.7');

    const second = await runCliInProcess(['certs', '--fixture', fixture, '--out', out, '--host', 'broker.example']);
    expect(second.stdout).toBe(`station-sim certs: ${out}: CA kept, 0 certificates issued, 8 kept\n`);
    expect(await snapshot(out)).toEqual(files);
  });

  it('OpenSSL verifies every certificate against the CA and its CRL, each for its purpose, with the extensions brokers check', async () => {
    const work = await mkdtemp(join(tmpdir(), 'certs-'));
    const out = join(work, 'certs');
    expect((await runCliInProcess(['certs', '--fixture', await fixtureWith(work, TOKENS), '--out', out])).code).toBe(0);
    const verify = (file: string, purpose: string) =>
      openssl(['verify', '-CAfile', join(out, 'ca.crt'), '-crl_check', '-CRLfile', join(out, 'crl.pem'), '-purpose', purpose, join(out, file)]);
    expect(verify('server.crt', 'sslserver')).toEqual({ status: 0, output: `${join(out, 'server.crt')}: OK` });
    for (const file of ['service.crt', 'control.crt', 'agent.crt', 'observer.crt', ...TOKENS.map((token) => `stations/${token}.crt`)]) {
      expect(verify(file, 'sslclient'), file).toEqual({ status: 0, output: `${join(out, file)}: OK` });
    }
    // A client certificate is not a server's, and the other way round.
    expect(verify('stations/ST-1.crt', 'sslserver').status).not.toBe(0);
    expect(verify('server.crt', 'sslclient').status).not.toBe(0);

    const ca = openssl(['x509', '-in', join(out, 'ca.crt'), '-noout', '-text']).output;
    expect(ca).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(ca).toMatch(/Key Usage: critical\s+Certificate Sign, CRL Sign/);
    const station = openssl(['x509', '-in', join(out, 'stations/ST-1.crt'), '-noout', '-text']).output;
    expect(station).toMatch(/Extended Key Usage:\s+TLS Web Client Authentication/);
    expect(station).toContain('X509v3 Subject Key Identifier');
    expect(station).toContain('X509v3 Authority Key Identifier');
    expect(station).toContain('ecdsa-with-SHA256');
    const crl = openssl(['crl', '-in', join(out, 'crl.pem'), '-CAfile', join(out, 'ca.crt'), '-noout', '-text']);
    expect(crl.output).toContain('verify OK');
    expect(crl.output).toMatch(/Next Update: /);
  });

  it('adds the stations a grown fixture has and keeps the rest byte for byte', async () => {
    const work = await mkdtemp(join(tmpdir(), 'certs-'));
    const out = join(work, 'certs');
    await runCliInProcess(['certs', '--fixture', await fixtureWith(work, TOKENS), '--out', out]);
    const before = await snapshot(out);
    const grown = await runCliInProcess(['certs', '--fixture', await fixtureWith(work, [...TOKENS, 'ST-4']), '--out', out]);
    expect(grown.stdout).toBe(`station-sim certs: ${out}: CA kept, 1 certificate issued, 8 kept\n`);
    const after = await snapshot(out);
    const changed = Object.keys(after).filter((name) => after[name] !== before[name]).sort();
    expect(changed).toEqual(['index.json', 'stations/ST-4.crt', 'stations/ST-4.key']);
    const index = JSON.parse(await readFile(join(out, 'index.json'), 'utf8'));
    expect(Object.keys(index.stations)).toEqual(['ST-1', 'ST-2', 'ST-3', 'ST-4']);
  });

  it('--revoke puts the station on the CRL and in index.json; twice is fine; the certificate stays revoked on re-runs', async () => {
    const work = await mkdtemp(join(tmpdir(), 'certs-'));
    const out = join(work, 'certs');
    const fixture = await fixtureWith(work, TOKENS);
    await runCliInProcess(['certs', '--fixture', fixture, '--out', out]);
    const serial = new X509Certificate(readFileSyncText(join(out, 'stations/ST-2.crt'))).serialNumber;
    const revoked = await runCliInProcess(['certs', '--out', out, '--revoke', 'ST-2']);
    expect(revoked).toMatchObject({ code: 0, stdout: `station-sim certs: revoked ST-2 (serial ${serial.toLowerCase()}); crl.pem rewritten\n` });
    const again = await runCliInProcess(['certs', '--out', out, '--revoke', 'ST-2']);
    expect(again).toMatchObject({ code: 0, stdout: 'station-sim certs: ST-2 was already revoked\n' });

    const crl = openssl(['crl', '-in', join(out, 'crl.pem'), '-noout', '-text']).output;
    expect(crl.match(/Serial Number: (\w+)/g)).toEqual([`Serial Number: ${serial}`]);
    const index = JSON.parse(await readFile(join(out, 'index.json'), 'utf8'));
    expect(index.revoked).toEqual([{ token: 'ST-2', serial: serial.toLowerCase(), revokedAt: expect.any(String) }]);
    const verify = (file: string) => openssl(['verify', '-CAfile', join(out, 'ca.crt'), '-crl_check', '-CRLfile', join(out, 'crl.pem'), join(out, file)]);
    expect(verify('stations/ST-2.crt').output).toContain('certificate revoked');
    expect(verify('stations/ST-1.crt').status).toBe(0);

    const before = await snapshot(out);
    await runCliInProcess(['certs', '--fixture', fixture, '--out', out]);
    expect(await snapshot(out)).toEqual(before);
  });

  it('re-issues what has expired and keeps the CA; --json says what it did in one line', async () => {
    const work = await mkdtemp(join(tmpdir(), 'certs-'));
    const out = join(work, 'certs');
    const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000);
    await generateTestPki({ dir: out, tokens: ['ST-1'], days: 2, now: tenDaysAgo });
    const before = await snapshot(out);
    const result = await runCliInProcess(['certs', '--fixture', await fixtureWith(work, ['ST-1']), '--out', out, '--json']);
    expect(JSON.parse(result.stdout)).toEqual({ event: 'certs', dir: out, caCreated: false, issued: 6, kept: 0, revoked: [] });
    const after = await snapshot(out);
    expect(Object.keys(after).filter((name) => after[name] === before[name]).sort()).toEqual(['ca.crt', 'ca.key']);
    expect(new Date(new X509Certificate(readFileSync(join(out, 'stations/ST-1.crt'), 'utf8')).validTo).getTime()).toBeGreaterThan(Date.now());
  });

  it('says in one line what cannot work: an unknown station, a folder it cannot write, a CA key not of the CA', async () => {
    const work = await mkdtemp(join(tmpdir(), 'certs-'));
    const out = join(work, 'certs');
    const fixture = await fixtureWith(work, TOKENS);
    await runCliInProcess(['certs', '--fixture', fixture, '--out', out]);

    expect(await runCliInProcess(['certs', '--out', out, '--revoke', 'NOPE'])).toEqual({
      code: 1,
      stdout: '',
      stderr: `station-sim: ${out} has no certificate for station NOPE: run station-sim certs with a fixture that has it first\n`,
    });
    const blocked = join(work, 'a-file');
    await writeFile(blocked, 'not a folder');
    expect(await runCliInProcess(['certs', '--fixture', fixture, '--out', join(blocked, 'certs')])).toEqual({
      code: 1,
      stdout: '',
      stderr: `station-sim: cannot write the certificates to ${join(blocked, 'certs')}: a part of the path is a file, not a folder (ENOTDIR)\n`,
    });
    const caCert = await readFile(join(out, 'ca.crt'));
    await writeFile(join(out, 'ca.key'), await readFile(join(out, 'observer.key')));
    expect(await runCliInProcess(['certs', '--fixture', fixture, '--out', out])).toEqual({
      code: 1,
      stdout: '',
      stderr: `station-sim: ${join(out, 'ca.key')} is not the key of ${join(out, 'ca.crt')}: station-sim certs never makes a new CA over an old one (delete both to start again)\n`,
    });
    expect(await readFile(join(out, 'ca.crt'))).toEqual(caCert);
    const neither = await runCliInProcess(['certs', '--out', out]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('give --fixture to make certificates, or --revoke TOKEN to revoke one');
  });
});

function readFileSyncText(path: string): string {
  return readFileSync(path, 'utf8');
}
