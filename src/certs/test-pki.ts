/**
 * The test PKI of `station-sim certs` (docs/mqtt-security.md): a CA, its CRL, the broker's
 * certificate, one certificate per identity (service, control, agent, observer) and one per station, in
 * one folder. Re-running keeps every certificate that is still good byte for byte, adds what is
 * missing and never makes a new CA over an old one; revoking a station rewrites the CRL.
 *
 * "Still good" is checked with Node's own X509Certificate (fast enough for 10,000 stations):
 * signed by this CA, within its validity, its key file matching it, and for the broker a SAN that
 * covers every host asked for.
 */
import { X509Certificate, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SimError } from '../errors.js';
import { DEFAULT_IDENTITIES } from '../fixture/mqtt-schema.js';
import { createCa, createCrl, issueCertificate, loadSigningCa, readCrl, sanCovers, type CertificatePurpose, type IssuedPair, type SigningCa } from './x509.js';

/** The broker certificate always names these; `hosts` adds to them. */
export const DEFAULT_SERVER_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];
/** The identities besides stations: file stem and certificate CN, their default user name (docs/mqtt-security.md, "Identities"). */
export const IDENTITY_CERTS: readonly { name: string; commonName: string }[] = (['service', 'control', 'agent', 'observer'] as const).map((role) => ({
  name: DEFAULT_IDENTITIES[role].certs,
  commonName: DEFAULT_IDENTITIES[role].username,
}));
export const CA_COMMON_NAME = 'station-sim test CA';
const CA_YEARS = 10;
const DAY_MS = 86_400_000;
/** notBefore lies this far in the past, so a clock a little behind still accepts a fresh certificate. */
const BACKDATE_MS = 3_600_000;
/** Certificates issued at once: key generation and signing overlap with file writes. */
const CONCURRENCY = 8;

/** Where each file of the folder is. */
export function pkiPaths(dir: string) {
  return {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    crl: join(dir, 'crl.pem'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    index: join(dir, 'index.json'),
    stationsDir: join(dir, 'stations'),
    identityCert: (name: string) => join(dir, `${name}.crt`),
    identityKey: (name: string) => join(dir, `${name}.key`),
    stationCert: (token: string) => join(dir, 'stations', `${token}.crt`),
    stationKey: (token: string) => join(dir, 'stations', `${token}.key`),
  };
}

interface CertRecord {
  serial: string;
  notAfter: string;
}

/** index.json: what the folder holds, and what was revoked (the CRL is made from `revoked`). */
export interface PkiIndex {
  version: 1;
  ca: CertRecord;
  crl: { number: number; thisUpdate: string; nextUpdate: string };
  server: CertRecord & { hosts: string[] };
  identities: Record<string, CertRecord>;
  stations: Record<string, CertRecord>;
  revoked: { token: string; serial: string; revokedAt: string }[];
}

export interface TestPkiOptions {
  dir: string;
  /** Station tokens; each gets `stations/{token}.crt` and `.key` with CN = token. */
  tokens: readonly string[];
  /** Host names or addresses the broker certificate names besides localhost, 127.0.0.1 and ::1. */
  hosts?: readonly string[];
  /** Validity of the certificates issued now, and of the CRL. @default 365 */
  days?: number;
  /** The time to issue at (tests). @default now */
  now?: Date;
}

export interface TestPkiResult {
  dir: string;
  caCreated: boolean;
  /** Files names (relative to `dir`) of the certificates issued by this run. */
  issued: string[];
  /** How many certificates were kept as they were. */
  kept: number;
  crlWritten: boolean;
}

/** Makes or completes the test PKI in `options.dir`. */
export async function generateTestPki(options: TestPkiOptions): Promise<TestPkiResult> {
  // Whole seconds: what a certificate can hold, so index.json says what the files say.
  const now = wholeSeconds(options.now ?? new Date());
  const days = options.days ?? 365;
  if (!Number.isInteger(days) || days < 1 || days > 36_500) throw new SimError('BAD_REQUEST', `--days must be a whole number from 1 to 36500, not ${days}`);
  const dir = options.dir;
  const paths = pkiPaths(dir);
  await makeFolder(dir);
  await makeFolder(paths.stationsDir);

  const previous = await readIndex(paths.index);
  const { ca, caKey, created: caCreated, record: caRecord } = await openOrCreateCa(dir, now);
  const validity = { notBefore: new Date(now.getTime() - BACKDATE_MS), notAfter: new Date(Math.min(now.getTime() + days * DAY_MS, ca.certificate.notAfter.getTime())) };
  const caPublicKey = createPublicKey(caKey);
  const issued: string[] = [];
  let kept = 0;
  const revokedSerials = new Set((previous?.revoked ?? []).map((entry) => entry.serial.toLowerCase()));

  /** Keeps the pair at `certPath`/`keyPath` if it is still good, else issues and writes a new one. */
  const ensure = async (
    certPath: string,
    keyPath: string,
    commonName: string,
    purpose: CertificatePurpose,
  ): Promise<CertRecord> => {
    const existing = await readGoodPair({ certPath, keyPath, commonName, purpose }, { caPublicKey, now, revokedSerials });
    if (existing) {
      kept += 1;
      return existing;
    }
    const pair = await issueCertificate(ca, { commonName, purpose, ...validity });
    await writePair(dir, certPath, keyPath, pair);
    issued.push(certPath.slice(dir.length + 1));
    return { serial: pair.serial, notAfter: validity.notAfter.toISOString() };
  };

  const hosts = uniqueHosts([...DEFAULT_SERVER_HOSTS, ...(options.hosts ?? []), ...(previous?.server.hosts ?? [])]);
  const server = await ensure(paths.serverCert, paths.serverKey, 'localhost', { kind: 'server', hosts });
  const identities: Record<string, CertRecord> = {};
  for (const identity of IDENTITY_CERTS) {
    identities[identity.name] = await ensure(paths.identityCert(identity.name), paths.identityKey(identity.name), identity.commonName, { kind: 'client' });
  }
  const stations: Record<string, CertRecord> = { ...previous?.stations };
  const tokens = [...new Set([...Object.keys(stations), ...options.tokens])];
  await inBatches(tokens, CONCURRENCY, async (token) => {
    stations[token] = await ensure(paths.stationCert(token), paths.stationKey(token), token, { kind: 'client' });
  });

  const index: PkiIndex = {
    version: 1,
    ca: caRecord,
    crl: previous?.crl ?? { number: 0, thisUpdate: '', nextUpdate: '' },
    server: { ...server, hosts },
    identities,
    stations: sortKeys(stations),
    revoked: previous?.revoked ?? [],
  };
  const crlWritten = await ensureCrl(dir, ca, index, { now, days, caCreated });
  await writeIfChanged(dir, paths.index, `${JSON.stringify(index, null, 2)}\n`, 0o644);
  return { dir, caCreated, issued, kept, crlWritten };
}

export interface RevokeResult {
  token: string;
  serial: string;
  /** False when the station was revoked before: nothing changed. */
  revokedNow: boolean;
}

/** Puts a station's certificate on the CRL (and in index.json) and rewrites the CRL. Revoking twice changes nothing. */
export async function revokeStation(options: { dir: string; token: string; now?: Date; days?: number }): Promise<RevokeResult> {
  const now = wholeSeconds(options.now ?? new Date());
  const { dir, token } = options;
  const paths = pkiPaths(dir);
  const index = await readIndex(paths.index);
  const record = index?.stations[token];
  if (!index || !record) throw new SimError('CERTS_UNKNOWN_STATION', `${dir} has no certificate for station ${token}: run station-sim certs with a fixture that has it first`);
  const { ca } = await openCa(dir);
  const already = index.revoked.find((entry) => entry.serial === record.serial);
  if (!already) index.revoked.push({ token, serial: record.serial, revokedAt: now.toISOString() });
  await ensureCrl(dir, ca, index, { now, days: options.days ?? 365, caCreated: false });
  await writeIfChanged(dir, paths.index, `${JSON.stringify(index, null, 2)}\n`, 0o644);
  return { token, serial: record.serial, revokedNow: !already };
}

/** The CA of the folder, made if neither ca.crt nor ca.key exists. */
async function openOrCreateCa(dir: string, now: Date): Promise<{ ca: SigningCa; caKey: KeyObject; created: boolean; record: CertRecord }> {
  const paths = pkiPaths(dir);
  const [certPem, keyPem] = await Promise.all([readOptional(paths.caCert), readOptional(paths.caKey)]);
  if (certPem === undefined && keyPem === undefined) {
    const notAfter = new Date(now.getTime() + CA_YEARS * 365 * DAY_MS);
    const pair = await createCa({ commonName: CA_COMMON_NAME, notBefore: new Date(now.getTime() - BACKDATE_MS), notAfter });
    await writePair(dir, paths.caCert, paths.caKey, pair);
    const opened = await openCa(dir, now);
    return { ...opened, created: true };
  }
  return { ...(await openCa(dir, now)), created: false };
}

async function openCa(dir: string, now = new Date()): Promise<{ ca: SigningCa; caKey: KeyObject; record: CertRecord }> {
  const paths = pkiPaths(dir);
  const [certPem, keyPem] = await Promise.all([readOptional(paths.caCert), readOptional(paths.caKey)]);
  if (certPem === undefined || keyPem === undefined) {
    const missing = certPem === undefined ? paths.caCert : paths.caKey;
    throw new SimError('CERTS_CA_MISMATCH', `${missing} is missing while its pair is there: station-sim certs never makes a new CA over an old one (delete both to start again)`);
  }
  let certificate: X509Certificate;
  let caKey: KeyObject;
  try {
    certificate = new X509Certificate(certPem);
    caKey = createPrivateKey(keyPem);
  } catch {
    throw new SimError('CERTS_CA_MISMATCH', `${paths.caCert} or ${paths.caKey} is not a PEM certificate and key`);
  }
  if (!certificate.checkPrivateKey(caKey)) {
    throw new SimError('CERTS_CA_MISMATCH', `${paths.caKey} is not the key of ${paths.caCert}: station-sim certs never makes a new CA over an old one (delete both to start again)`);
  }
  if (new Date(certificate.validTo).getTime() <= now.getTime()) {
    throw new SimError('CERTS_CA_MISMATCH', `${paths.caCert} expired on ${new Date(certificate.validTo).toISOString()}: delete the folder's CA (and what it signed) to start again`);
  }
  const ca = await loadSigningCa(certPem, keyPem);
  return { ca, caKey, record: { serial: certificate.serialNumber.toLowerCase(), notAfter: new Date(certificate.validTo).toISOString() } };
}

/**
 * The record of the pair at `certPath`/`keyPath` if it can stay, else undefined. A revoked
 * certificate stays as it is, expired or not (delete its files to issue a new one): re-running
 * never quietly gives a revoked station a working certificate.
 */
async function readGoodPair(
  { certPath, keyPath, commonName, purpose }: { certPath: string; keyPath: string; commonName: string; purpose: CertificatePurpose },
  { caPublicKey, now, revokedSerials }: { caPublicKey: KeyObject; now: Date; revokedSerials: ReadonlySet<string> },
): Promise<CertRecord | undefined> {
  const [certPem, keyPem] = await Promise.all([readOptional(certPath), readOptional(keyPath)]);
  if (certPem === undefined || keyPem === undefined) return undefined;
  try {
    const certificate = new X509Certificate(certPem);
    if (!certificate.verify(caPublicKey) || certificate.subject !== `CN=${commonName}`) return undefined;
    const notBefore = new Date(certificate.validFrom).getTime();
    const notAfter = new Date(certificate.validTo).getTime();
    const revoked = revokedSerials.has(certificate.serialNumber.toLowerCase());
    if (!revoked && (notBefore > now.getTime() || notAfter <= now.getTime())) return undefined;
    if (!certificate.checkPrivateKey(createPrivateKey(keyPem))) return undefined;
    if (purpose.kind === 'server' && !sanCovers(certPem, purpose.hosts)) return undefined;
    return { serial: certificate.serialNumber.toLowerCase(), notAfter: new Date(notAfter).toISOString() };
  } catch {
    return undefined;
  }
}

/**
 * Writes the CRL when the revocations changed, it is missing, or it expires within a day; `days`
 * is how long a new one is good for, and `caCreated` says the CA is new (so any CRL there is not its).
 */
async function ensureCrl(
  dir: string,
  ca: SigningCa,
  index: PkiIndex,
  { now, days, caCreated }: { now: Date; days: number; caCreated: boolean },
): Promise<boolean> {
  const path = pkiPaths(dir).crl;
  const current = caCreated ? undefined : await readOptional(path);
  if (current !== undefined && (await crlIsCurrent(current, ca, index, now))) return false;
  const number = index.crl.number + 1;
  const thisUpdate = new Date(now.getTime() - BACKDATE_MS);
  const nextUpdate = new Date(Math.min(now.getTime() + days * DAY_MS, ca.certificate.notAfter.getTime()));
  const entries = index.revoked.map((entry) => ({ serial: entry.serial, revokedAt: new Date(entry.revokedAt) }));
  const pem = await createCrl(ca, { entries, thisUpdate, nextUpdate, number });
  index.crl = { number, thisUpdate: thisUpdate.toISOString(), nextUpdate: nextUpdate.toISOString() };
  await writeIfChanged(dir, path, pem, 0o644);
  return true;
}

async function crlIsCurrent(pem: string, ca: SigningCa, index: PkiIndex, now: Date): Promise<boolean> {
  try {
    const crl = await readCrl(pem, ca);
    if (!crl.signedByCa || !crl.nextUpdate || crl.nextUpdate.getTime() - now.getTime() < DAY_MS) return false;
    const listed = new Set(crl.serials);
    const wanted = new Set(index.revoked.map((entry) => entry.serial.toLowerCase()));
    return listed.size === wanted.size && [...wanted].every((serial) => listed.has(serial));
  } catch {
    return false;
  }
}

async function readIndex(path: string): Promise<PkiIndex | undefined> {
  const text = await readOptional(path);
  if (text === undefined) return undefined;
  try {
    const index = JSON.parse(text) as PkiIndex;
    return index.version === 1 ? index : undefined;
  } catch {
    return undefined;
  }
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function makeFolder(path: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true });
  } catch (error) {
    throw unwritable(path, error);
  }
}

function unwritable(path: string, error: unknown): SimError {
  const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
  const why: Record<string, string> = {
    ENOTDIR: 'a part of the path is a file, not a folder',
    EEXIST: 'a file of that name is in the way',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EROFS: 'the file system is read-only',
    ENOSPC: 'no space left on the device',
  };
  return new SimError('CERTS_DIR_UNWRITABLE', `cannot write the certificates to ${path}: ${why[code] ?? 'the system refused'} (${code})`, { cause: error });
}

/** The key first (mode 0600), then the certificate: a pair is never a certificate without its key. */
async function writePair(dir: string, certPath: string, keyPath: string, pair: IssuedPair): Promise<void> {
  await writeAtomically(dir, keyPath, pair.keyPem, 0o600);
  await writeAtomically(dir, certPath, pair.certificatePem, 0o644);
}

async function writeIfChanged(dir: string, path: string, text: string, mode: number): Promise<void> {
  if ((await readOptional(path)) === text) return;
  await writeAtomically(dir, path, text, mode);
}

/** Through a temporary file and a rename, so a crash never leaves half a file. */
async function writeAtomically(dir: string, path: string, text: string, mode: number): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, text, { mode });
    await chmod(temporary, mode); // the umask may have taken bits off
    await rename(temporary, path);
  } catch (error) {
    throw unwritable(dir, error);
  }
}

function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

function uniqueHosts(hosts: readonly string[]): string[] {
  return [...new Set(hosts.map((host) => host.trim()).filter((host) => host.length > 0))];
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

async function inBatches<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
