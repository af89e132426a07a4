/**
 * A test PKI made with the `openssl` command, and a Mosquitto that speaks TLS and WebSocket with
 * it: the client side of docs/mqtt-security.md proven against a broker we did not write. Made in a
 * temporary folder per test file; nothing here depends on `station-sim certs`.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnSync } from 'node:child_process';
import { freePort, waitForPort } from './free-port.js';
import { supervisedServer } from './supervised-server.js';
import { MOSQUITTO } from './mosquitto.js';

const run = promisify(execFile);

export interface TestPki {
  dir: string;
  /** The CA the broker and the clients' certificates are signed by. */
  ca: string;
  /** Another CA, that the broker does not know. */
  otherCa: string;
  server: { cert: string; key: string };
  /** The broker's certificate, expired yesterday. */
  expiredServer: { cert: string; key: string };
  /** A client certificate with CN `name`, signed by `ca` (or by `otherCa`), written as `dir/<stem>.crt` and `.key`. */
  client(name: string, options?: { stem?: string; byOtherCa?: boolean }): Promise<{ cert: string; key: string }>;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  await run('openssl', args, { cwd });
}

/** A P-256 key and a certificate for `subject`, signed by the CA at `caStem` for `days` (negative: already expired). */
async function signed(dir: string, stem: string, subject: string, caStem: string, days: number, extensions: string): Promise<void> {
  await openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${stem}.key`, '-out', `${stem}.csr`, '-subj', subject], dir);
  await writeFile(join(dir, `${stem}.ext`), `${extensions}\n`);
  // -days -1 puts notAfter a day before notBefore (now): an expired certificate with OpenSSL 3.0, which has no -not_after.
  const serial = String(Math.floor(Math.random() * 2 ** 31));
  await openssl(['x509', '-req', '-in', `${stem}.csr`, '-CA', `${caStem}.crt`, '-CAkey', `${caStem}.key`, '-set_serial', serial, '-days', String(days), '-extfile', `${stem}.ext`, '-out', `${stem}.crt`], dir);
  // Mosquitto started as root reads its files as the `mosquitto` user.
  await chmod(join(dir, `${stem}.key`), 0o644);
}

async function selfSignedCa(dir: string, stem: string, name: string): Promise<void> {
  await openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${stem}.key`, '-out', `${stem}.crt`, '-days', '2', '-subj', `/CN=${name}`], dir);
}

export async function makeTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'station-sim-pki-'));
  await chmod(dir, 0o755);
  await selfSignedCa(dir, 'ca', 'station-sim test CA');
  await selfSignedCa(dir, 'other-ca', 'a CA nobody trusts');
  // The broker's name: 127.0.0.1 only, so "localhost" is a wrong host name.
  const serverExt = 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth';
  await signed(dir, 'server', '/CN=127.0.0.1', 'ca', 2, serverExt);
  await signed(dir, 'expired', '/CN=127.0.0.1', 'ca', -1, serverExt);
  const files = (stem: string): { cert: string; key: string } => ({ cert: join(dir, `${stem}.crt`), key: join(dir, `${stem}.key`) });
  return {
    dir,
    ca: join(dir, 'ca.crt'),
    otherCa: join(dir, 'other-ca.crt'),
    server: files('server'),
    expiredServer: files('expired'),
    client: async (name, options = {}) => {
      const stem = options.stem ?? name;
      await mkdir(join(dir, stem, '..'), { recursive: true, mode: 0o755 });
      await signed(dir, stem, `/CN=${name}`, options.byOtherCa ? 'other-ca' : 'ca', 2, 'extendedKeyUsage=clientAuth');
      return files(stem);
    },
  };
}

export interface TlsMosquitto {
  /** mqtts://, client certificate required, its CN the user name. */
  mqttsUrl: string;
  /** ws://, user name and password. */
  wsUrl: string;
  /** wss://, client certificate required, its CN the user name. */
  wssUrl: string;
  /** mqtts:// with an expired broker certificate. */
  expiredUrl: string;
  stop(): Promise<void>;
}

/**
 * Mosquitto with four listeners on free loopback ports (per_listener_settings): TLS requiring a
 * client certificate (`use_identity_as_username`), WebSocket with passwords, WebSocket over TLS
 * requiring a client certificate, and TLS with an expired certificate.
 */
export async function startTlsMosquitto(pki: TestPki, options: { users?: Record<string, string> } = {}): Promise<TlsMosquitto> {
  const [tlsPort, wsPort, wssPort, expiredPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const passwordFile = join(pki.dir, 'passwd');
  await writeFile(passwordFile, '');
  for (const [name, password] of Object.entries(options.users ?? {})) {
    const made = spawnSync('mosquitto_passwd', ['-b', passwordFile, name, password]);
    if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr}`);
  }
  await chmod(passwordFile, 0o644);
  const certListener = (port: number, server: { cert: string; key: string }): string[] => [
    `listener ${port} 127.0.0.1`,
    `cafile ${pki.ca}`,
    `certfile ${server.cert}`,
    `keyfile ${server.key}`,
    'require_certificate true',
    'use_identity_as_username true',
    'allow_anonymous false',
  ];
  const lines = [
    'per_listener_settings true',
    'persistence false',
    'log_dest stderr',
    'log_type error',
    'set_tcp_nodelay true',
    ...certListener(tlsPort, pki.server),
    `listener ${wsPort} 127.0.0.1`,
    'protocol websockets',
    'allow_anonymous false',
    `password_file ${passwordFile}`,
    ...certListener(wssPort, pki.server),
    'protocol websockets',
    ...certListener(expiredPort, pki.expiredServer),
  ];
  const config = join(pki.dir, 'mosquitto.conf');
  await writeFile(config, `${lines.join('\n')}\n`);
  const { start, kill } = supervisedServer(MOSQUITTO, ['-c', config], async () => {
    for (const port of [tlsPort, wsPort, wssPort, expiredPort]) await waitForPort(port);
  });
  await start();
  return {
    mqttsUrl: `mqtts://127.0.0.1:${tlsPort}`,
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    wssUrl: `wss://127.0.0.1:${wssPort}`,
    expiredUrl: `mqtts://127.0.0.1:${expiredPort}`,
    stop: kill,
  };
}
