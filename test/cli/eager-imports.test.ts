/**
 * What a command loads before it can do anything: a module's static imports load with it, and
 * theirs. Costly ones that a run may not need (Ink and React, fastify, the broker, the judge, the
 * fixture schema) are imported with `import()` where they are needed; these tests keep them out of
 * the paths that do without. Read from the sources, as test/architecture/import-graph.test.ts reads
 * them: an import for types only loads nothing.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The modules a file loads as it is loaded: its static imports and re-exports, except those for types only. */
function staticImports(path: string): string[] {
  const kind = path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, false, kind);
  return file.statements.flatMap((statement) => {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const onlyTypes = bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
      return clause !== undefined && (clause.isTypeOnly || (clause.name === undefined && onlyTypes)) ? [] : [statement.moduleSpecifier.text];
    }
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.exportClause;
      const onlyTypes = clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((element) => element.isTypeOnly);
      return statement.isTypeOnly || onlyTypes ? [] : [statement.moduleSpecifier.text];
    }
    return [];
  });
}

/** The source file a relative specifier names (`./x.js` is `./x.ts`, `./x.tsx` or `./x/index.ts`). */
function sourceOf(from: string, specifier: string): string {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.js$/, '');
  const found = [`${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts')].find((candidate) => statSync(candidate, { throwIfNoEntry: false })?.isFile());
  if (found === undefined) throw new Error(`${from} imports "${specifier}", which is no file`);
  return found;
}

/** A package's name from a specifier: `yargs/helpers` is yargs, `@sinclair/typebox/compiler` is @sinclair/typebox. */
const packageOf = (specifier: string): string => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/** What loading `entry` loads: the files of the checkout (as `src/…`) and the packages, by name. */
function loadedWith(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (path: string): void => {
    const name = relative(ROOT, path).split(sep).join('/');
    if (files.has(name)) return;
    files.add(name);
    for (const specifier of staticImports(path)) {
      if (specifier.startsWith('.')) visit(sourceOf(path, specifier));
      else if (!specifier.startsWith('node:')) packages.add(packageOf(specifier));
    }
  };
  visit(join(ROOT, entry));
  return { files: [...files].sort(), packages: [...packages].sort() };
}

describe('what a command loads before it runs', () => {
  it('reads every command declaration, and nothing that runs one, at every start (--version, --help)', () => {
    const { files, packages } = loadedWith('src/cli/main.ts');
    expect(packages).toEqual(['yargs']);
    expect(files.filter((file) => /\/handler\.ts$/.test(file))).toEqual([]);
  });

  it('shows a transcript without the judge or the fixture schema', () => {
    const { files, packages } = loadedWith('src/cli/commands/transcript/show-handler.ts');
    // The shape of a finding (judge-log.ts) is read: a transcript's judge entries are findings, their
    // schema taken from the event stream's. The rules that find them are not.
    const judgeOrFixture = (file: string): boolean =>
      (file.startsWith('src/judge/') && file !== 'src/judge/judge-log.ts') ||
      file === 'src/transcript/transcript-judge.ts' ||
      file === 'src/fixture/fixture-schema.ts' ||
      file.startsWith('src/simulator/');
    expect(files.filter(judgeOrFixture)).toEqual([]);
    expect(packages).not.toContain('ajv');
  });

  it('plays the demo without Ink and React unless the dashboard shows it', () => {
    const { files, packages } = loadedWith('src/cli/commands/demo/handler.ts');
    expect(packages.filter((name) => name === 'ink' || name === 'react')).toEqual([]);
    expect(files.filter((file) => file.endsWith('.tsx'))).toEqual([]);
    expect(loadedWith('src/cli/commands/demo/play-in-dashboard.ts').packages).toEqual(expect.arrayContaining(['ink', 'react']));
  });
});
