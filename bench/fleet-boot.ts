/**
 * Fleet boot alone, for one fleet size: the boot part of the harness (`bench/boot.ts`) with the
 * embedded broker, kept as its own command because the top-level README points here.
 * `npm run bench -- --only boot` measures every size, with the raw mqtt.js baseline.
 *
 *   npx tsx bench/fleet-boot.ts --stations 10000 [--locks 4] [--runs 3] [--baseline] [--json out.json]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runBoot } from './boot.js';
import { runHeader } from './lib/machine.js';
import { renderBoot } from './lib/report.js';

const { values } = parseArgs({
  options: {
    stations: { type: 'string', default: '10000' },
    locks: { type: 'string', default: '4' },
    runs: { type: 'string', default: '3' },
    baseline: { type: 'boolean', default: false },
    json: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});

const header = await runHeader(new Date());
const rows = await runBoot({
  broker: 'embedded',
  sizes: [Number(values.stations)],
  locks: Number(values.locks),
  runs: Number(values.runs),
  // One size was asked for: run it as often as asked, however big.
  bigRuns: Number(values.runs),
  baseline: values.baseline,
  log: (line) => process.stderr.write(`${line}\n`),
  verbose: values.verbose,
});
if (values.json) {
  mkdirSync(path.dirname(values.json), { recursive: true });
  writeFileSync(values.json, `${JSON.stringify({ header, boot: rows }, null, 2)}\n`);
}
process.stdout.write(`${renderBoot(rows)}\n`);
process.exitCode = rows.some((row) => row.runs.length === 0) ? 1 : 0;
