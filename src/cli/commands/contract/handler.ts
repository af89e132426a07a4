/** What `contract asyncapi` does: writes the AsyncAPI document of a fixture's stations. */
import { writeFile } from 'node:fs/promises';
import { buildAsyncApi } from '../../../mqtt/asyncapi.js';
import { resolveFixture } from '../../../simulator/resolve-fixture.js';
import type { CliIo } from '../../output.js';
import type { AsyncApiFlags } from './options.js';

export async function runAsyncApi(io: CliIo, { fixture: fixtureFile, broker, out }: AsyncApiFlags): Promise<void> {
  const fixture = await resolveFixture(fixtureFile);
  const text = `${JSON.stringify(buildAsyncApi(fixture, broker === undefined ? {} : { brokerUrl: broker }), null, 2)}\n`;
  if (out === undefined) io.stdout.write(text);
  else await writeFile(out, text);
}
