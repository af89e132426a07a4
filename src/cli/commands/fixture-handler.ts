/** What `fixture validate` does: loads a fixture as `up` would, and says what it holds or what is wrong. */
import { resolveFixture } from '../../simulator/resolve-fixture.js';
import type { CliIo } from '../output.js';

/** The flags `fixture validate`'s handler sees. */
export interface ValidateFlags {
  readonly file: string;
}

export async function runValidate(io: CliIo, { file }: ValidateFlags): Promise<void> {
  // The names `up`, `run` and `transcript judge --fixture` take, resolved the same way.
  const fixture = await resolveFixture(file);
  const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
  io.stdout.write(`${file}: valid (${count(fixture.stations.length, 'station')}, ${count(fixture.accounts.length, 'account')})\n`);
}
