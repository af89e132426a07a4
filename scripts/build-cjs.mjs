/**
 * The CommonJS build, for `require('station-sim')` and Jest's default (CommonJS) runtime on every
 * Node the package supports (require(esm) is unflagged only from Node 20.19). Runs after tsc: the
 * entries of dist/ (ESM) are bundled together into one module, dist/cjs/station-sim.cjs, with its
 * dependencies left to require() from node_modules, except the ESM-only ones (ESM_ONLY), which are
 * bundled in. Each entry, dist/cjs/<name>.cjs, is a thin file that hands out its part of that one
 * module, so every class exists once: an `ApiError` thrown through `station-sim/testing` is an
 * `instanceof` the `ApiError` of `station-sim` and of `station-sim/client` (one bundle per entry
 * gave each entry its own copy of every class). Every `import.meta.url` becomes the file URL of that module's ESM counterpart
 * in dist/, computed at run time from the bundle's own place, so relative lookups (the bundled
 * fixtures, the broker's worker module, package.json) find the same files as from ESM.
 */
import { build } from 'esbuild';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const out = join(dist, 'cjs');

/** Entry name → the ESM module it bundles (the package's exports map names both). */
const ENTRIES = { index: 'index.js', client: 'client/index.js', testing: 'testing/index.js' };

/**
 * Dependencies that ship no CommonJS (Node 20 before 20.19 cannot require them): bundled in, with
 * what they import. Every other dependency stays a require() of node_modules.
 */
const ESM_ONLY = ['aedes', 'jose'];
const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const external = Object.keys(manifest.dependencies)
  .filter((name) => !ESM_ONLY.includes(name))
  .flatMap((name) => [name, `${name}/*`]);

const importMetaUrl = {
  name: 'import-meta-url',
  setup(builder) {
    builder.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(dist + sep)) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta')) return { contents: source, loader: 'js' };
      const fromBundle = relative(out, args.path).split(sep).join('/');
      const url = `require("node:url").pathToFileURL(require("node:path").join(__dirname, ${JSON.stringify(fromBundle)})).href`;
      const contents = source.replaceAll('import.meta.url', `(${url})`);
      if (contents.includes('import.meta')) throw new Error(`${args.path}: import.meta other than import.meta.url has no CommonJS equivalent here`);
      return { contents, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

/** The one module behind every entry: each entry's exports under the entry's name. */
const SHARED = 'station-sim';
const sharedSource = Object.entries(ENTRIES)
  .map(([name, file]) => `export * as ${name} from ${JSON.stringify(`./${file}`)};`)
  .join('\n');

await build({
  stdin: { contents: sharedSource, resolveDir: dist, sourcefile: `${SHARED}-entries.js`, loader: 'js' },
  outfile: join(out, `${SHARED}.cjs`),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external,
  sourcemap: true,
  logLevel: 'warning',
  plugins: [importMetaUrl],
});

for (const name of Object.keys(ENTRIES)) {
  await rm(join(out, `${name}.cjs.map`), { force: true }); // a per-entry bundle's map, from an older build
  await writeFile(join(out, `${name}.cjs`), `'use strict';\n// One module behind every entry point (see scripts/build-cjs.mjs): one copy of each class.\nmodule.exports = require('./${SHARED}.cjs').${name};\n`);
}

// Types for require: the declarations of dist/ again as CommonJS ones (.d.cts, relative imports to
// .cjs), in dist/cjs/types/. A .d.cts that re-exported the ESM .d.ts would fail a CommonJS project's
// type check without skipLibCheck (TS1479: an ES module cannot be required).
const RELATIVE_JS = /((?:from|import)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]*?)\.js\2/g;
const ESM_ONLY_IMPORT = new RegExp(`^import \\{([^}]*)\\} from (['"](?:${ESM_ONLY.join('|')})['"])`, 'gm');
for (const file of await readdir(dist, { recursive: true })) {
  if (!file.endsWith('.d.ts') || file.startsWith(`cjs${sep}`)) continue;
  const source = await readFile(join(dist, file), 'utf8');
  const target = join(out, 'types', file.replace(/\.d\.ts$/, '.d.cts'));
  await mkdir(dirname(target), { recursive: true });
  const cjs = source
    .replace(RELATIVE_JS, '$1$2$3.cjs$2')
    // In a declaration every import is of types: a type-only import resolved as ESM lets a CommonJS
    // file take them from an ESM-only package (TypeScript 5.3 or later).
    .replace(ESM_ONLY_IMPORT, 'import type {$1} from $2 with { "resolution-mode": "import" }')
    .replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n');
  await writeFile(target, cjs);
}
