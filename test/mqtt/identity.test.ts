/**
 * identity.ts: each party's connect settings from the fixture's `mqtt` section, its folder and the
 * command line, with the defaults of docs/mqtt-security.md; secrets named, never shown.
 */
import { describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadIdentities } from '../../src/mqtt/identity.js';
import type { ClientCertificate } from '../../src/mqtt/transport.js';

const PEM = (what: string): string => `-----BEGIN ${what}-----\nAAAA\n-----END ${what}-----\n`;

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'identity-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

describe('loadIdentities', () => {
  it('without an mqtt section, gives each party a client id of its own and nothing else, as before', async () => {
    const ids = await loadIdentities({ settings: {}, fixtureSource: '<fixture>', secure: true, randomHex: () => 'abcd1234' });
    expect(await ids.station('A1')).toEqual({ clientId: 'station-sim-A1' });
    expect(await ids.service()).toEqual({ clientId: 'station-sim-api-abcd1234' });
    expect(await ids.control()).toEqual({ clientId: 'station-sim-control-abcd1234' });
    expect((await ids.control('agent')).clientId).toMatch(/^station-sim-agent-[0-9a-f-]{36}$/);
    expect(ids.tls).toEqual({});
  });

  it('with a certs folder, takes its layout: the CA, each station its own certificate, read when it connects', async () => {
    const dir = await folder({
      'certs/ca.crt': PEM('CERTIFICATE'),
      'certs/stations/A1.crt': PEM('CERTIFICATE'),
      'certs/stations/A1.key': PEM('PRIVATE KEY'),
      'certs/service.crt': PEM('CERTIFICATE'),
      'certs/service.key': PEM('PRIVATE KEY'),
    });
    const ids = await loadIdentities({ settings: { certs: 'certs' }, fixtureSource: join(dir, 'fixture.json'), secure: true, randomHex: () => '00ff00ff' });
    expect(ids.tls).toEqual({ ca: PEM('CERTIFICATE') });
    const station = await ids.station('A1');
    expect(station).toMatchObject({ clientId: 'station-sim-A1', username: 'A1' });
    expect(await (station.clientCert as () => Promise<ClientCertificate>)()).toEqual({ cert: PEM('CERTIFICATE'), key: PEM('PRIVATE KEY') });
    // A station without files fails when it connects, naming the file.
    const missing = await ids.station('B2');
    await expect((missing.clientCert as () => Promise<ClientCertificate>)()).rejects.toThrow(`Cannot read the certificate of station B2: ${join(dir, 'certs/stations/B2.crt')} (ENOENT)`);
    expect(await ids.service()).toMatchObject({ clientId: 'station-sim-api-00ff00ff', username: 'station-sim-service', clientCert: { cert: PEM('CERTIFICATE') } });
  });

  it('reads no certificate and no CA for a broker without TLS', async () => {
    const ids = await loadIdentities({ settings: { certs: 'nowhere' }, fixtureSource: '/no/such/fixture.json' });
    expect(ids.tls).toEqual({});
    expect(await ids.station('A1')).toEqual({ clientId: 'station-sim-A1', username: 'A1' });
    expect(await ids.service()).not.toHaveProperty('clientCert');
  });

  it('fills templates with the token, and lets the command line win for the CA, server name and the shared certificate', async () => {
    const dir = await folder({ 'own-ca.pem': PEM('CERTIFICATE'), 'cli/c.pem': PEM('CERTIFICATE'), 'cli/k.pem': PEM('PRIVATE KEY'), 'keys/A1.pem': PEM('PRIVATE KEY'), 'crts/A1.pem': PEM('CERTIFICATE') });
    const ids = await loadIdentities({
      settings: {
        tls: { ca: 'missing-ca.pem', serverName: 'broker.example' },
        identities: { station: { clientId: 'lock-{token}', username: 'u-{token}', cert: 'crts/{token}.pem', key: 'keys/{token}.pem' }, control: { clientId: 'ops' } },
      },
      fixtureSource: join(dir, 'fixture.json'),
      secure: true,
      overrides: { ca: join(dir, 'own-ca.pem'), servername: 'other.example', cert: join(dir, 'cli/c.pem'), key: join(dir, 'cli/k.pem'), insecure: true },
      randomHex: () => '12345678',
    });
    expect(ids.tls).toEqual({ ca: PEM('CERTIFICATE'), servername: 'other.example', insecure: true });
    const station = await ids.station('A1');
    expect(station).toMatchObject({ clientId: 'lock-A1', username: 'u-A1' });
    expect(await (station.clientCert as () => Promise<ClientCertificate>)()).toEqual({ cert: PEM('CERTIFICATE'), key: PEM('PRIVATE KEY') });
    expect(await ids.control()).toMatchObject({ clientId: 'ops-12345678', username: 'station-sim-control', clientCert: { cert: PEM('CERTIFICATE'), key: PEM('PRIVATE KEY') } });
  });

  it('reads passwords from the environment or the first line of a file, and names what is missing without its value', async () => {
    const dir = await folder({ 'pw/A1': 'file-pass\nsecond line', 'pw/E1': '\nnot the first line' });
    const settings = { identities: { station: { password: { file: 'pw/{token}' } }, service: { password: { env: 'SVC_PW' } } } };
    const ids = await loadIdentities({ settings, fixtureSource: join(dir, 'f.json'), env: { SVC_PW: 'env-pass' } });
    expect((await ids.station('A1')).password).toBe('file-pass');
    expect((await ids.service()).password).toBe('env-pass');
    await expect(ids.station('E1')).rejects.toThrow(`The MQTT password file of station E1, ${join(dir, 'pw/E1')}, is empty`);
    const unset = await loadIdentities({ settings, fixtureSource: join(dir, 'f.json'), env: {} });
    await expect(unset.service()).rejects.toThrow('The MQTT password of the service identity is in the environment variable SVC_PW, which is not set');
    // Into the embedded broker of this process no password is read (nor needed).
    const embedded = await loadIdentities({ settings, fixtureSource: join(dir, 'f.json'), env: {}, passwords: false });
    expect(await embedded.service()).not.toHaveProperty('password');
  });

  it('refuses a file that is not PEM, naming it', async () => {
    const dir = await folder({ 'ca.der': 'binary stuff' });
    await expect(loadIdentities({ settings: { tls: { ca: 'ca.der' } }, fixtureSource: join(dir, 'f.json'), secure: true })).rejects.toThrow(
      `The broker CA (${join(dir, 'ca.der')}) is not a PEM file`,
    );
  });
});
