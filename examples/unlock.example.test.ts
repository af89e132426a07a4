/**
 * An end-to-end suite as a user of station-sim writes one: a simulator per file (or the one
 * `station-sim run` started, which the helper attaches to), reset before every test, log in as a
 * fixture account, unlock, make the fleet misbehave, wait for the lock. Runs in `npm test`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withSimulator } from '../src/testing/index.js';

const simulator = withSimulator({ beforeAll, afterAll, beforeEach }, { fixture: 'ci' });

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

  it('gets a clear failure from a station taken offline', async () => {
    const sim = simulator();
    await sim.setOnline('CI-1', false);
    await sim.waitForStation('CI-1', 'offline');
    const client = await sim.login();
    expect((await client.unlock('CI-1', '1')).success).toBe(false);
  });

  it('finds the station back online in the next test: beforeEach reset the fleet', async () => {
    expect((await (await simulator().login()).getStation('CI-1')).status).toBe('online');
  });

  it('explains a wait that never ends', async () => {
    await expect(simulator().waitForLock('CI-JAMMED', '1', 'unlocked', { timeoutMs: 100 })).rejects.toThrow(
      'lock CI-JAMMED/1 did not become "unlocked" within 100 ms; last seen "jammed" (station online)',
    );
  });
});
