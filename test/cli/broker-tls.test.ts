/**
 * `--broker-ca`, `--broker-cert`, `--broker-key`, `--broker-servername` and `--insecure`, run as a
 * user would: checked at the edge, and against a Mosquitto with TLS, the certificate errors as one
 * line and `--insecure` said once on stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brokerTlsOf } from '../../src/cli/option-checks.js';
import { CliProcess, runCliInProcess } from '../helpers/cli-process.js';
import { mosquittoAvailable } from '../helpers/mosquitto.js';
import { makeTestPki, startTlsMosquitto, type TestPki, type TlsMosquitto } from '../helpers/tls-mosquitto.js';

describe('brokerTlsOf', () => {
  it('gathers the TLS options given, and nothing when none is', () => {
    expect(brokerTlsOf({ broker: 'mqtts://b:8883' })).toBeUndefined();
    expect(brokerTlsOf({ broker: 'mqtts://b:8883', 'broker-ca': 'ca.pem', 'broker-servername': 'b.example', insecure: true })).toEqual({
      ca: 'ca.pem',
      servername: 'b.example',
      insecure: true,
    });
  });

  it('refuses a certificate without its key, an empty value, and TLS options without --broker', () => {
    expect(() => brokerTlsOf({ broker: 'mqtts://b', 'broker-cert': 'c.pem' })).toThrow('--broker-cert and --broker-key go together');
    expect(() => brokerTlsOf({ broker: 'mqtts://b', 'broker-ca': ' ' })).toThrow('--broker-ca needs a value');
    expect(() => brokerTlsOf({ 'broker-ca': 'ca.pem' })).toThrow(/about an external broker: give --broker$/);
  });
});

describe.skipIf(!mosquittoAvailable())('station-sim stations against a TLS Mosquitto', () => {
  let pki: TestPki;
  let broker: TlsMosquitto;
  let fixture: string;

  beforeAll(async () => {
    pki = await makeTestPki();
    await pki.client('C1', { stem: 'certs/stations/C1' });
    await pki.client('station-sim-control', { stem: 'certs/control' });
    await pki.client('station-sim-agent', { stem: 'certs/agent' });
    fixture = join(pki.dir, 'fixture.json');
    const stations = [{ token: 'C1', stationId: 1, locks: [{ lockId: '1' }] }];
    await writeFile(fixture, JSON.stringify({ mqtt: { certs: 'certs', tls: { ca: 'ca.crt' } }, stations }));
    broker = await startTlsMosquitto(pki);
  }, 60_000);

  afterAll(async () => {
    await broker?.stop();
    if (pki) await rm(pki.dir, { recursive: true, force: true });
  });

  it('runs the fleet over mqtts:// with the certificates of the fixture', async () => {
    const cli = new CliProcess(['stations', '--json', '--fixture', fixture, '--broker', broker.mqttsUrl]);
    expect(await cli.readyJson()).toMatchObject({ mqttUrl: broker.mqttsUrl, stations: 1, online: 1 });
    expect(await cli.signal('SIGTERM')).toBe(0);
  });

  it('fails with one line naming the broker and the reason', async () => {
    const untrusted = await runCliInProcess(['stations', '--fixture', fixture, '--broker', broker.mqttsUrl, '--broker-ca', pki.otherCa]);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(new RegExp(`^station-sim: The MQTT broker at ${broker.mqttsUrl} has a certificate this machine does not trust \\(.+\\): give its CA with --broker-ca\\n$`));

    const expired = await runCliInProcess(['stations', '--fixture', fixture, '--broker', broker.expiredUrl]);
    expect(expired.stderr).toContain(`The MQTT broker at ${broker.expiredUrl} has a certificate that has expired`);
    const wrongName = await runCliInProcess(['stations', '--fixture', fixture, '--broker', broker.mqttsUrl, '--broker-servername', 'localhost']);
    expect(wrongName.stderr).toContain(`The MQTT broker at ${broker.mqttsUrl} has a certificate for another host name`);
  });

  it('says once on stderr that --insecure does not verify the broker, and connects to the expired one', async () => {
    const cli = new CliProcess(['stations', '--json', '--fixture', fixture, '--broker', broker.expiredUrl, '--insecure']);
    expect(await cli.readyJson()).toMatchObject({ online: 1 });
    const lines = cli.stderr.split('\n').filter((line) => line.includes('--insecure'));
    expect(lines).toEqual([`station-sim: --insecure: the certificate of the MQTT broker at ${broker.expiredUrl} is not verified; anyone on the way to it can pose as the broker`]);
    expect(await cli.signal('SIGTERM')).toBe(0);
  });
});
