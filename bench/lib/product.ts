/**
 * Which build of station-sim the benchmark children run. By default the compiled `dist/`, what the
 * `station-sim` command and the package run (the harness builds it first). `BENCH_PRODUCT=source`
 * (`npm run bench -- --source`) runs `src/` under tsx instead: tsx compiles with esbuild's
 * `keepNames`, which names every function through a helper that turns the function's properties
 * into a dictionary (256 bytes a closure, a dozen per station) and calls it on every closure made,
 * so source figures are heavier and slower than what users run.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

export type Product = 'dist' | 'source';

export function benchProduct(): Product {
  return process.env.BENCH_PRODUCT === 'source' ? 'source' : 'dist';
}

/**
 * The checkout whose product the children run: this one, or `BENCH_PRODUCT_ROOT` (another
 * checkout with its dist/ built), so two commits can be measured by the same harness, alternately.
 */
export function productRoot(): URL {
  const other = process.env.BENCH_PRODUCT_ROOT;
  return other ? pathToFileURL(other.endsWith('/') ? other : `${other}/`) : new URL('../../', import.meta.url);
}

/** A module of the product by its path under src/ without extension, e.g. `simulator/start-simulator`. */
export async function importProduct<T>(path: string): Promise<T> {
  const url = new URL(benchProduct() === 'source' ? `src/${path}.ts` : `dist/${path}.js`, productRoot());
  return (await import(url.href)) as T;
}

/** Builds dist/ (`npm run build`), so the children run the code of this checkout. */
export function buildProduct(): void {
  const root = fileURLToPath(productRoot());
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}
