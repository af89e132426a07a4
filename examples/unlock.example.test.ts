/**
 * An end-to-end suite as a user of station-sim writes one: a simulator per file, log in as a
 * fixture account, unlock, wait for the lock. Runs in `npm test`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSimulator } from '../src/testing/index.js';

const simulator = withSimulator({ beforeAll, afterAll }, { fixture: 'ci' });

describe('my app against station-sim', () => {
  it('opens a lock and sees it close again', async () => {
    const { login, waitForLock } = simulator();
    const client = await login('ci@example.com');
    expect(await client.unlock('CI-1', '1')).toEqual({ success: true });
    await waitForLock('CI-1', '1', 'unlocked');
    await waitForLock('CI-1', '1', 'locked');
  });

  it('gets a clear failure from a jammed lock', async () => {
    const client = await simulator().login();
    expect(await client.unlock('CI-JAMMED', '1')).toEqual({ success: false, message: 'Lock is jammed' });
  });

  it('explains a wait that never ends', async () => {
    await expect(simulator().waitForLock('CI-JAMMED', '1', 'unlocked', { timeoutMs: 100 })).rejects.toThrow(
      'lock CI-JAMMED/1 did not become "unlocked" within 100 ms; last seen "jammed" (station online)',
    );
  });
});
