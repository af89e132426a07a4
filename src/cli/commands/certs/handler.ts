/** What `certs` does: makes or completes a fixture's test PKI, and revokes stations' certificates. */
import { resolve } from 'node:path';
import { generateTestPki, revokeStation, type RevokeResult, type TestPkiResult } from '../../../certs/test-pki.js';
import { loadFixture } from '../../../fixture/load-fixture.js';
import { UsageError, type CliIo } from '../../output.js';
import type { CertsFlags } from './options.js';

export async function runCerts(io: CliIo, argv: CertsFlags): Promise<void> {
  const dir = resolve(argv.out);
  const { fixture: fixturePath, revoke, host: hosts, days } = argv;
  if (fixturePath === undefined && revoke.length === 0) throw new UsageError('give --fixture to make certificates, or --revoke TOKEN to revoke one');
  let made: TestPkiResult | undefined;
  if (fixturePath !== undefined) {
    const fixture = await loadFixture(fixturePath);
    made = await generateTestPki({ dir, tokens: fixture.stations.map((station) => station.token), hosts, days });
  }
  const revoked: RevokeResult[] = [];
  for (const token of revoke) revoked.push(await revokeStation({ dir, token, days }));
  if (argv.json) {
    io.stdout.write(`${JSON.stringify({ event: 'certs', dir, ...(made && { caCreated: made.caCreated, issued: made.issued.length, kept: made.kept }), revoked })}\n`);
    return;
  }
  if (made) {
    const ca = made.caCreated ? 'new CA' : 'CA kept';
    io.stdout.write(`station-sim certs: ${dir}: ${ca}, ${made.issued.length} certificate${made.issued.length === 1 ? '' : 's'} issued, ${made.kept} kept\n`);
  }
  for (const entry of revoked) {
    io.stdout.write(entry.revokedNow ? `station-sim certs: revoked ${entry.token} (serial ${entry.serial}); crl.pem rewritten\n` : `station-sim certs: ${entry.token} was already revoked\n`);
  }
}
