/**
 * The simulator URL the dashboard attaches to, checked once at the edge (`startDashboard`, and the
 * CLI before it takes the terminal): a mistyped URL is one clear line, not a React error box.
 */

/** A URL the dashboard cannot use; the message never repeats the URL, which may hold a password. */
export class DashboardUrlError extends Error {
  /** What is wrong, without a subject ("must start with http:// …"), for the CLI to name its option. */
  readonly problem: string;

  constructor(problem: string) {
    super(`the simulator URL ${problem}`);
    this.name = 'DashboardUrlError';
    this.problem = problem;
  }
}

/**
 * Parses the simulator's base URL: http or https only, and no `user:pass@` (Node's fetch refuses
 * such URLs, and the control token, not basic auth, is what `/sim/v1` checks). Trailing slashes go.
 */
export function parseDashboardUrl(text: string): URL {
  const schemeProblem = 'must start with http:// or https://, e.g. http://127.0.0.1:8080';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DashboardUrlError(schemeProblem);
  }
  // "127.0.0.1:8080" does not parse, but "localhost:8080" does, with "localhost:" as its scheme.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DashboardUrlError(schemeProblem);
  if (url.username !== '' || url.password !== '') {
    throw new DashboardUrlError('must not hold credentials (user:pass@): /sim/v1 takes a control token, not basic auth');
  }
  return url;
}

/** The URL as given minus trailing slashes, query and fragment, and minus any userinfo: what may be shown or requested. */
export function baseUrlOf(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}
