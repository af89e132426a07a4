/**
 * `station-sim contract asyncapi`: the AsyncAPI 3.0 document of the station MQTT contract for a
 * fixture's stations (src/mqtt/asyncapi.ts), the same document `GET /sim/v1/asyncapi.json` serves.
 */
import { writeFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { buildAsyncApi } from '../../mqtt/asyncapi.js';
import { redactUrl } from '../../shared/redact-url.js';
import { resolveFixture } from '../../simulator/start-simulator.js';
import { withFixture } from '../options.js';
import { UsageError, type CliIo } from '../output.js';

const BROKER_SCHEMES = ['mqtt:', 'mqtts:', 'ws:', 'wss:'];

export function contractCommand(io: CliIo): CommandModule {
  return {
    command: 'contract <document>',
    describe: 'Print a machine-readable contract document',
    builder: (yargs) =>
      yargs
        .command({
          command: 'asyncapi',
          describe: "The AsyncAPI 3.0 document of the station MQTT contract, with the fixture's topic templates",
          builder: (y) =>
            withFixture(y)
              .option('broker', {
                type: 'string',
                describe: 'URL of the broker the stations use (mqtt://, mqtts://, ws://, wss://): the document\'s server (none without it)',
                coerce: (value: string) => {
                  let url: URL;
                  try {
                    url = new URL(value);
                  } catch {
                    throw new UsageError(`--broker needs a URL, e.g. mqtt://127.0.0.1:1883, not ${JSON.stringify(redactUrl(value))}`);
                  }
                  if (!BROKER_SCHEMES.includes(url.protocol)) throw new UsageError(`--broker must be an mqtt://, mqtts://, ws:// or wss:// URL, not ${JSON.stringify(redactUrl(value))}`);
                  return redactUrl(value);
                },
              })
              .option('out', { alias: 'o', type: 'string', describe: 'Write the document to this file instead of stdout' }),
          handler: async (argv) => {
            const fixture = await resolveFixture(argv.fixture as string | undefined);
            const broker = argv.broker as string | undefined;
            const text = `${JSON.stringify(buildAsyncApi(fixture, broker === undefined ? {} : { brokerUrl: broker }), null, 2)}\n`;
            const out = argv.out as string | undefined;
            if (out === undefined) io.stdout.write(text);
            else await writeFile(out, text);
          },
        })
        .demandCommand(1, 'name a document: asyncapi'),
    handler: () => undefined,
  };
}
