/** `certs`' options, in the order --help lists them, and the flags its handler sees. */
import type { FlagsOf, OptionGroup } from '../../options.js';

export const CERTS_OPTIONS = {
  json: { type: 'boolean', default: false, describe: 'Print what was done as one JSON line' },
  fixture: { alias: 'f', type: 'string', describe: 'Fixture whose stations get certificates (CN = token)' },
  out: { alias: 'o', type: 'string', demandOption: true, describe: 'Folder to write to (made if missing; re-running completes it)' },
  host: { type: 'string', array: true, default: [], describe: 'Host name or address the broker certificate names besides localhost, 127.0.0.1 and ::1 (repeatable)' },
  days: { type: 'number', default: 365, describe: 'Validity of the certificates issued now, and of the CRL, in days' },
  revoke: { type: 'string', array: true, default: [], describe: 'Revoke this station’s certificate and rewrite the CRL (repeatable)' },
} as const satisfies OptionGroup;

/** The flags `certs`' handler sees. */
export type CertsFlags = FlagsOf<typeof CERTS_OPTIONS>;
