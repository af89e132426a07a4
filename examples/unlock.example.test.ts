/**
 * An end-to-end suite as a user of station-sim writes one (vitest): a simulator per file (or the
 * one `station-sim run` started, which the helper attaches to), reset before every test, log in as
 * a fixture account, unlock, make the fleet misbehave, wait for the lock. It imports the package by
 * name, as in your project: `npm test` runs it against the sources, and the packaging test
 * (test/packaging/consumer-install.test.ts) against the package installed in a project of its own.
 * unlock.jest.test.cjs and unlock.node-test.test.mjs are the same for Jest and node:test.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from 'station-sim';
import { withSimulator } from 'station-sim/testing';

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

  it('throws ApiError for a station the account cannot reach', async () => {
    const client = await simulator().login();
    await expect(client.getStation('NO-SUCH-STATION')).rejects.toBeInstanceOf(ApiError);
    await expect(client.getStation('NO-SUCH-STATION')).rejects.toMatchObject({ status: 404, message: 'Station not found' });
  });

  it('explains a wait that never ends', async () => {
    await expect(simulator().waitForLock('CI-JAMMED', '1', 'unlocked', { timeoutMs: 100 })).rejects.toThrow(
      'lock CI-JAMMED/1 did not become "unlocked" within 100 ms; last seen "jammed" (station online)',
    );
  });
});
