/**
 * The CommonJS build, for `require('station-sim')` and Jest's default (CommonJS) runtime on every
 * Node the package supports (require(esm) is unflagged only from Node 20.19). Runs after tsc: each
 * entry of dist/ (ESM) is bundled into dist/cjs/<name>.cjs with its dependencies left to require()
 * from node_modules, except the ESM-only ones (ESM_ONLY), which are bundled in. Every `import.meta.url` becomes the file URL of that module's ESM counterpart
 * in dist/, computed at run time from the bundle's own place, so relative lookups (the bundled
 * fixtures, the broker's worker module, package.json) find the same files as from ESM.
 */
import { build } from 'esbuild';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
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

await build({
  entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, join(dist, file)])),
  outdir: out,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external,
  sourcemap: true,
  logLevel: 'warning',
  plugins: [importMetaUrl],
});

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
