import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const WORKER_THREAD = pathToFileURL(fileURLToPath(new URL('../../src/shared/worker-thread.ts', import.meta.url))).href;

/** A compiled worker module (as in dist/) that answers with its workerData. */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'station-sim-worker-'));
  await writeFile(join(dir, 'package.json'), '{"type":"module"}');
  await writeFile(join(dir, 'echo-worker.js'), "import { parentPort, workerData } from 'node:worker_threads';\nparentPort.postMessage(workerData);\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('startModuleWorker', () => {
  /** Starts the echo worker from a script given as Node runs it with `nodeOptions`; returns what the worker answered. */
  function echoFromScript(nodeOptions: string[]): string {
    const caller = pathToFileURL(join(dir, 'caller.js')).href;
    const script = `
      const { startModuleWorker } = await import(${JSON.stringify(WORKER_THREAD)});
      const worker = startModuleWorker(${JSON.stringify(caller)}, 'echo-worker', 42);
      const answer = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', (error) => reject(new Error(error.code + ': ' + error.message)));
      });
      await worker.terminate();
      console.log(JSON.stringify(answer));`;
    return execFileSync(process.execPath, ['--import', 'tsx', ...nodeOptions, '-e', script], { encoding: 'utf8' });
  }

  it('starts a compiled worker from a script given with --input-type=module, as `node --input-type=module < script` runs one', () => {
    expect(echoFromScript(['--input-type=module'])).toBe('42\n');
  });

  it('keeps the V8 options the process runs with (npm start runs with --max-semi-space-size) beside --input-type', () => {
    expect(echoFromScript(['--max-semi-space-size=32', '--input-type=module'])).toBe('42\n');
  });
});
