/**
 * `station-sim contract asyncapi`: the AsyncAPI 3.0 document of the station MQTT contract for a
 * fixture's stations (src/mqtt/asyncapi.ts), the same document `GET /sim/v1/asyncapi.json` serves.
 */
import { writeFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { buildAsyncApi } from '../../mqtt/asyncapi.js';
import { redactUrl } from '../../shared/redact-url.js';
import { resolveFixture } from '../../simulator/start-simulator.js';
import { FIXTURE_OPTIONS, type FlagsOf, type OptionGroup } from '../options.js';
import { UsageError, type CliIo } from '../output.js';

const BROKER_SCHEMES = ['mqtt:', 'mqtts:', 'ws:', 'wss:'];

/** `contract asyncapi`'s options, in the order --help lists them. */
const ASYNCAPI_OPTIONS = {
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

function asyncApiCommand(io: CliIo): CommandModule<object, AsyncApiFlags> {
  return {
    command: 'asyncapi',
    describe: "The AsyncAPI 3.0 document of the station MQTT contract, with the fixture's topic templates",
    builder: (yargs) => yargs.options(ASYNCAPI_OPTIONS),
    handler: async ({ fixture: fixtureFile, broker, out }: AsyncApiFlags) => {
      const fixture = await resolveFixture(fixtureFile);
      const text = `${JSON.stringify(buildAsyncApi(fixture, broker === undefined ? {} : { brokerUrl: broker }), null, 2)}\n`;
      if (out === undefined) io.stdout.write(text);
      else await writeFile(out, text);
    },
  };
}

export function contractCommand(io: CliIo): CommandModule {
  return {
    command: 'contract <document>',
    describe: 'Print a machine-readable contract document',
    builder: (yargs) => yargs.command(asyncApiCommand(io)).demandCommand(1, 'name a document: asyncapi'),
    handler: () => undefined,
  };
}
