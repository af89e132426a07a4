/**
 * The docs stand alone (issue 18, item 13): someone with only the repository or the package can
 * follow every link. No Markdown file links outside the repository (the `../shared/…` folder the
 * project was written beside is not there for anyone else), every relative link names a file that
 * exists, and a link to a heading of a Markdown file names a heading that exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

/** README.md, CHANGELOG.md, bench/README.md and every Markdown file under docs/. */
function markdownFiles(): string[] {
  const files = ['README.md', 'CHANGELOG.md', 'bench/README.md'].map((file) => join(root, file));
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(root, 'docs'));
  return files;
}

/** The text outside fenced code blocks and inline code, where Markdown makes links. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Link targets: inline `[text](target "title")`, images, and reference definitions `[id]: target`. */
function linkTargets(text: string): string[] {
  const body = prose(text);
  const inline = [...body.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const references = [...body.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  return [...inline, ...references];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{Letter}\p{Number}\s-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

describe('Markdown links', () => {
  const files = markdownFiles();

  it('finds the files it checks', () => {
    expect(files.map((file) => relative(root, file))).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', join('docs', 'api.md'), join('docs', 'fixtures.md')]));
  });

  it('never point outside the repository, and every relative link names a file (and heading) that exists', () => {
    const problems: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const name = relative(root, file);
      // Named even as plain text: a path into the folder beside the repository is dead for everyone else.
      for (const match of text.matchAll(/\.\.\/(?:\.\.\/)*shared\/\S*/g)) problems.push(`${name}: mentions ${match[0]}`);
      for (const target of linkTargets(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
        const [path, fragment] = target.split('#', 2) as [string, string | undefined];
        const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        if (resolved !== root && !resolved.startsWith(root + sep)) {
          problems.push(`${name}: ${target} is outside the repository`);
          continue;
        }
        if (!existsSync(resolved)) {
          problems.push(`${name}: ${target} does not exist`);
          continue;
        }
        if (fragment && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment)) problems.push(`${name}: ${target} names no heading of ${relative(root, resolved)}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('catch a link out of the repository, a missing file and a missing heading', () => {
    expect(linkTargets('see [spec](../../shared/spec.md), [b][x], `[not](a link)`\n\n[x]: ./docs/nowhere.md\n```\n[no](code.md)\n```\n')).toEqual([
      '../../shared/spec.md',
      './docs/nowhere.md',
    ]);
    expect(slug('Reproducible runs')).toBe('reproducible-runs');
    expect(slug('Event stream `GET /sim/v1/events` (WebSocket)')).toBe('event-stream-get-simv1events-websocket');
  });
});
