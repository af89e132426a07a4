import { resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import { generateTestPki, revokeStation, type RevokeResult, type TestPkiResult } from '../../certs/test-pki.js';
import { loadFixture } from '../../fixture/load-fixture.js';
import { UsageError, type CliIo } from '../output.js';
import type { FlagsOf, OptionGroup } from '../options.js';

const CERTS_OPTIONS = {
  json: { type: 'boolean', default: false, describe: 'Print what was done as one JSON line' },
  fixture: { alias: 'f', type: 'string', describe: 'Fixture whose stations get certificates (CN = token)' },
  out: { alias: 'o', type: 'string', demandOption: true, describe: 'Folder to write to (made if missing; re-running completes it)' },
  host: { type: 'string', array: true, default: [], describe: 'Host name or address the broker certificate names besides localhost, 127.0.0.1 and ::1 (repeatable)' },
  days: { type: 'number', default: 365, describe: 'Validity of the certificates issued now, and of the CRL, in days' },
  revoke: { type: 'string', array: true, default: [], describe: 'Revoke this station’s certificate and rewrite the CRL (repeatable)' },
} as const satisfies OptionGroup;

/** The flags `certs`' handler sees. */
export type CertsFlags = FlagsOf<typeof CERTS_OPTIONS>;

/** `station-sim certs`: the test PKI of a fixture (docs/mqtt-security.md, "station-sim certs"). */
export function certsCommand(io: CliIo): CommandModule<object, CertsFlags> {
  return {
    command: 'certs',
    describe: 'Make a test CA and certificates for the broker, the identities and every station of a fixture; revoke a station',
    builder: (yargs) =>
      yargs
        .options(CERTS_OPTIONS)
        .example('$0 certs --fixture fixtures/demo.json --out certs', 'make or complete the test PKI')
        .example('$0 certs --out certs --revoke ST-1001', 'revoke one station'),
    handler: async (argv: CertsFlags) => {
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
    },
  };
}
