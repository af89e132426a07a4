/** `contract asyncapi`'s options, in the order --help lists them, and the flags its handler sees. */
import { redactUrl } from '../../../shared/redact-url.js';
import { FIXTURE_OPTIONS, type FlagsOf, type OptionGroup } from '../../options.js';
import { UsageError } from '../../output.js';

const BROKER_SCHEMES = ['mqtt:', 'mqtts:', 'ws:', 'wss:'];

/** `contract asyncapi`'s options, in the order --help lists them. */
export const ASYNCAPI_OPTIONS = {
  ...FIXTURE_OPTIONS,
  broker: {
    type: 'string',
    describe: 'URL of the broker the stations use (mqtt://, mqtts://, ws://, wss://): the document\'s server (none without it)',
    coerce: (value: string): string => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        throw new UsageError(`--broker needs a URL, e.g. mqtt://127.0.0.1:1883, not ${JSON.stringify(redactUrl(value))}`);
      }
      if (!BROKER_SCHEMES.includes(url.protocol)) throw new UsageError(`--broker must be an mqtt://, mqtts://, ws:// or wss:// URL, not ${JSON.stringify(redactUrl(value))}`);
      return redactUrl(value);
    },
  },
  out: { alias: 'o', type: 'string', describe: 'Write the document to this file instead of stdout' },
} as const satisfies OptionGroup;

/** The flags `contract asyncapi`'s handler sees. */
export type AsyncApiFlags = FlagsOf<typeof ASYNCAPI_OPTIONS>;
