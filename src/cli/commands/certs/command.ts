import type { CommandModule } from 'yargs';
import type { CliIo } from '../../output.js';
import { CERTS_OPTIONS, type CertsFlags } from './options.js';

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
      const { runCerts } = await import('./handler.js');
      await runCerts(io, argv);
    },
  };
}
