/** `station-sim dashboard` in a child process: what it refuses before it takes the terminal. */
import { describe, expect, it } from 'vitest';
import { runCliToEnd } from '../helpers/cli-process.js';

describe('station-sim dashboard', () => {
  it('refuses a --url without http:// or https:// with one usage line', async () => {
    for (const url of ['127.0.0.1:8080', 'localhost:8080', 'ftp://127.0.0.1']) {
      const result = await runCliToEnd(['dashboard', '--url', url]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe('station-sim: --url must start with http:// or https://, e.g. http://127.0.0.1:8080\nRun station-sim --help for usage.\n');
    }
  });

  it('refuses a --url with credentials in it, without printing them', async () => {
    const result = await runCliToEnd(['dashboard', '--url', 'http://proxyuser:NOT-A-REAL-SECRET@127.0.0.1:9']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'station-sim: --url must not hold credentials (user:pass@): /sim/v1 takes a control token, not basic auth\nRun station-sim --help for usage.\n',
    );
  });
});
