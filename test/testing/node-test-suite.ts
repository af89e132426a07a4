/**
 * A suite written for node:test, as a user of station-sim would write one; suite-hooks.test.ts
 * runs it with `node --import tsx` and checks that it passes.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { withSimulator } from '../../src/testing/index.js';

const simulator = withSimulator({ beforeAll: before, afterAll: after }, { fixture: 'ci' });

it('opens a lock', async () => {
  const { login, waitForLock } = simulator();
  const client = await login('ci@example.com');
  assert.deepEqual(await client.unlock('CI-1', '1'), { success: true });
  await waitForLock('CI-1', '1', 'unlocked');
});
