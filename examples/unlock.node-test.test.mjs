/**
 * The vitest example (unlock.example.test.ts) for node:test: its hooks go under their own names
 * (`before`, `after`). Run with `node --test`.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ApiError } from 'station-sim/client';
import { withSimulator } from 'station-sim/testing';

const simulator = withSimulator({ before, after, beforeEach }, { fixture: 'ci' });

describe('my app against station-sim (node:test)', () => {
  it('opens a lock and sees it close again', async () => {
    const { login, waitForLock } = simulator();
    const client = await login('ci@example.com');
    assert.deepEqual(await client.unlock('CI-1', '1'), { success: true });
    await waitForLock('CI-1', '1', 'unlocked');
    await waitForLock('CI-1', '1', 'locked');
  });

  it('gets a clear failure from a jammed lock', async () => {
    const client = await simulator().login();
    assert.deepEqual(await client.unlock('CI-JAMMED', '1'), { success: false, message: 'Lock is jammed' });
  });

  it('throws ApiError for a station the account cannot reach', async () => {
    const client = await simulator().login();
    await assert.rejects(client.getStation('NO-SUCH-STATION'), (error) => error instanceof ApiError && error.status === 404);
  });
});
