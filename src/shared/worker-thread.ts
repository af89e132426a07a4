/**
 * Starting a worker thread from a module next to the caller, whether the project runs from its
 * TypeScript sources (tsx, vitest) or from `dist/`. From the sources the worker registers tsx
 * first: Node 20 does not apply the parent's `--import tsx` loader to a worker.
 */
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * Starts `./{name}.ts` (or `.js`) relative to `base`, the caller's `import.meta.url`. Workers
 * inherit the process's Node options, so `--cpu-prof` and heap settings apply to them too.
 */
export function startModuleWorker(base: string, name: string, workerData: unknown): Worker {
  const fromSources = base.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSources ? 'ts' : 'js'}`, base);
  // The worker starts from a line of code that imports the module, never from the file itself:
  // with `--input-type` among the inherited options (the script came on stdin or with --eval, as in
  // `node --input-type=module < script.mjs`) Node refuses a worker started from a file
  // (ERR_INPUT_TYPE_NOT_ALLOWED), and code is what that option is about. Leaving the option out of
  // an execArgv of our own is no way out: Node then checks that list and refuses the V8 and
  // per-process options in it, such as the --max-semi-space-size npm start runs with.
  const load = `import(${JSON.stringify(entry.href)})`;
  const boot = fromSources ? `import(${JSON.stringify(tsxEsmApi())}).then((tsx) => { tsx.register(); return ${load}; })` : load;
  return new Worker(boot, { eval: true, workerData });
}

/** tsx's ESM API, as its package's export map names it (require.resolve would give the CommonJS one). */
function tsxEsmApi(): string {
  const manifestPath = createRequire(import.meta.url).resolve('tsx/package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  return new URL(manifest.exports['./esm/api']!.import.default, pathToFileURL(manifestPath)).href;
}
