/**
 * Certificates no `station-sim certs` run makes, for the tests that show a broker refuses them:
 * an expired station certificate signed by the folder's own CA, and one from another CA.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pkiPaths } from '../../src/certs/test-pki.js';
import { createCa, issueCertificate, loadSigningCa, type IssuedPair } from '../../src/certs/x509.js';

const DAY_MS = 86_400_000;

export interface CertFiles {
  cert: string;
  key: string;
}

async function writeFiles(outDir: string, stem: string, pair: IssuedPair): Promise<CertFiles> {
  await mkdir(outDir, { recursive: true });
  const files = { cert: join(outDir, `${stem}.crt`), key: join(outDir, `${stem}.key`) };
  await writeFile(files.key, pair.keyPem, { mode: 0o600 });
  await writeFile(files.cert, pair.certificatePem);
  return files;
}

/** A certificate for `token` from the CA of `certsDir` that expired yesterday (valid for the day before). */
export async function makeExpiredStationCert(certsDir: string, token: string, outDir: string): Promise<CertFiles> {
  const paths = pkiPaths(certsDir);
  const ca = await loadSigningCa(await readFile(paths.caCert, 'utf8'), await readFile(paths.caKey, 'utf8'));
  const now = Date.now();
  const pair = await issueCertificate(ca, { commonName: token, purpose: { kind: 'client' }, notBefore: new Date(now - 2 * DAY_MS), notAfter: new Date(now - DAY_MS) });
  return writeFiles(outDir, `${token}-expired`, pair);
}

/** A valid certificate for `token` from a CA of its own (same CA name, other key): no broker of `certsDir` may trust it. */
export async function makeForeignCaStationCert(token: string, outDir: string): Promise<CertFiles & { ca: string }> {
  const now = Date.now();
  const caPair = await createCa({ commonName: 'station-sim test CA', notBefore: new Date(now - DAY_MS), notAfter: new Date(now + 30 * DAY_MS) });
  const ca = await loadSigningCa(caPair.certificatePem, caPair.keyPem);
  const pair = await issueCertificate(ca, { commonName: token, purpose: { kind: 'client' }, notBefore: new Date(now - DAY_MS), notAfter: new Date(now + 30 * DAY_MS) });
  const files = await writeFiles(outDir, `${token}-foreign`, pair);
  const caFile = join(outDir, 'foreign-ca.crt');
  await writeFile(caFile, caPair.certificatePem);
  return { ...files, ca: caFile };
}
