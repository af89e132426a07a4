/**
 * Topic templates as patterns the broker's ACLs compare topics and filters with (MQTT 3.1.1
 * §4.7): a template with `{prefix}` (and `{token}` when known) filled in, split into levels.
 * Topics are walked without splitting them, and a topic with one variable part (`{lockId}`) is
 * compared as a prefix and a suffix with no allocation: these run on every PUBLISH. Filters
 * (SUBSCRIBE, rare) are compared level by level.
 */
/** A topic template with `{prefix}` (and `{token}` when known) filled in, split into levels. */
export type Level = { lit: string } | { any: true } | { multi: true } | { re: RegExp };

/** Fills `{prefix}` and, when given, `{token}` and `{lockId}`. */
export function fill(template: string, prefix: string, token?: string, lockId?: string): string {
  let topic = template.replaceAll('{prefix}', prefix);
  if (token !== undefined) topic = topic.replaceAll('{token}', token);
  if (lockId !== undefined) topic = topic.replaceAll('{lockId}', lockId);
  return topic;
}

/** A pattern's levels: `#`, a whole `{token}` or `{lockId}` level, a literal, or a level with one inside. */
export function levels(pattern: string): Level[] {
  return pattern.split('/').map((level): Level => {
    if (level === '#') return { multi: true };
    if (level === '{token}' || level === '{lockId}') return { any: true };
    if (!level.includes('{token}') && !level.includes('{lockId}')) return { lit: level };
    const source = level
      .split(/(\{token\}|\{lockId\})/)
      .map((part) => (part === '{token}' || part === '{lockId}' ? '[^/+#]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    return { re: new RegExp(`^${source}$`) };
  });
}

/** Whether a topic (no wildcards) fits a pattern. Walks the topic without splitting it. */
export function topicFits(pattern: Level[], topic: string): boolean {
  let start = 0;
  for (let index = 0; index < pattern.length; index++) {
    const level = pattern[index]!;
    if ('multi' in level) return true;
    if (start > topic.length) return false;
    let end = topic.indexOf('/', start);
    if (end === -1) end = topic.length;
    if ('lit' in level) {
      if (end - start !== level.lit.length || !topic.startsWith(level.lit, start)) return false;
    } else if ('any' in level) {
      if (end === start) return false;
    } else if (!level.re.test(topic.slice(start, end))) return false;
    start = end + 1;
  }
  return start === topic.length + 1;
}

/** Whether every topic a filter matches fits the pattern (so the subscription reads nothing else). */
export function filterFits(pattern: Level[], filter: string): boolean {
  const parts = filter.split('/');
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index]!;
    const level = pattern[index];
    if (level === undefined) return false;
    if ('multi' in level) return true;
    if (part === '#') return false;
    if (part === '+') {
      if (!('any' in level)) return false;
      continue;
    }
    if ('lit' in level ? part !== level.lit : 'any' in level ? part === '' : !level.re.test(part)) return false;
  }
  return parts.length === pattern.length;
}

/** A topic with one variable level part (`{lockId}`): a prefix and a suffix, compared without allocating. */
export interface Around {
  pre: string;
  post: string;
}

export function around(template: string, prefix: string, token: string): Around | undefined {
  const filled = fill(template, prefix, token, '\u0000');
  const at = filled.indexOf('\u0000');
  if (at === -1 || filled.indexOf('\u0000', at + 1) !== -1) return undefined;
  return { pre: filled.slice(0, at), post: filled.slice(at + 1) };
}

export function fitsAround({ pre, post }: Around, topic: string): boolean {
  if (topic.length <= pre.length + post.length || !topic.startsWith(pre) || !topic.endsWith(post)) return false;
  const slash = topic.indexOf('/', pre.length);
  return slash === -1 || slash >= topic.length - post.length;
}

/**
 * True when `filter` can match some topic `pattern` covers: level by level, `#` takes the rest,
 * `+` any one level, a literal level must be one the pattern's level takes.
 */
export function filterOverlaps(pattern: Level[], filter: string): boolean {
  const parts = filter.split('/');
  for (let index = 0; ; index++) {
    const part = parts[index];
    const level = pattern[index];
    if (part === '#') return true;
    if (level !== undefined && 'multi' in level) return true;
    if (part === undefined || level === undefined) return part === undefined && level === undefined;
    if (part === '+') continue;
    if ('lit' in level ? part !== level.lit : 'any' in level ? part === '' : !level.re.test(part)) return false;
  }
}
