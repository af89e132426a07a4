/**
 * With STATION_SIM_TEST_CPU=<file> (vitest.config.ts adds this setup file then), each test file
 * appends one line of JSON to <file>: `self`, the CPU seconds its worker spent from before the
 * file's imports to its last hook (its threads included); `children`, those of the processes it
 * started and waited for (Linux only: 0 elsewhere); and `wall`. For finding the files that cost most.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';

const out = process.env.STATION_SIM_TEST_CPU;

/** CPU seconds of this process's children that have been waited for (Linux /proc). */
function childrenSeconds(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

if (out) {
  const cpu = process.cpuUsage();
  const children = childrenSeconds();
  const started = performance.now();
  afterAll(() => {
    const used = process.cpuUsage(cpu);
    const file = expect.getState().testPath ?? 'unknown';
    const line = { file, self: (used.user + used.system) / 1e6, children: childrenSeconds() - children, wall: (performance.now() - started) / 1000 };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
