/**
 * Every unlock run stored in bench/results, beside the machine's speed at the time (the
 * hello-world's CPU per request from the same run), and how many met the p99 target at each speed.
 *
 *   npx tsx bench/history.ts [--connections 100] [--dir bench/results] [--edges 40,50] [--from NAME]
 *
 * --from leaves out result files whose names sort before NAME (e.g. --from 2026-11-23-session4:
 * the runs of the code as it stands since the fourth session).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { historyRows, renderHistory, type HistoryRow } from './lib/history.js';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '100' },
    dir: { type: 'string', default: path.join(import.meta.dirname, 'results') },
    edges: { type: 'string', default: '40,50' },
    from: { type: 'string', default: '' },
  },
});

const connections = Number(values.connections);
const edges = values.edges.split(',').map(Number);
if (!Number.isInteger(connections) || connections < 1 || edges.some((edge) => !(edge > 0))) {
  process.stderr.write('history: --connections takes a whole number ≥ 1 and --edges positive numbers, comma separated\n');
  process.exit(2);
}

const rows: HistoryRow[] = [];
for (const file of readdirSync(values.dir).filter((name) => name.endsWith('.json') && name >= values.from).sort()) {
  let result: unknown;
  try {
    result = JSON.parse(readFileSync(path.join(values.dir, file), 'utf8'));
  } catch (error) {
    process.stderr.write(`history: skipped ${file}: ${(error as Error).message}\n`);
    continue;
  }
  rows.push(...historyRows(file, result as Parameters<typeof historyRows>[1], connections));
}
process.stdout.write(renderHistory(rows, { connections, edges, p99TargetMs: 30 }));
