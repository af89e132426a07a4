/**
 * The vitest example (unlock.example.test.ts) for Jest in its default CommonJS mode: `require`
 * gives the same classes from every entry point, so `toBeInstanceOf(ApiError)` holds for an error
 * of the client that `station-sim/testing` logged in.
 */
const { ApiError } = require('station-sim');
const { withSimulator } = require('station-sim/testing');

const simulator = withSimulator({ beforeAll, afterAll, beforeEach }, { fixture: 'ci' });

describe('my app against station-sim (Jest)', () => {
  test('opens a lock and sees it close again', async () => {
    const { login, waitForLock } = simulator();
    const client = await login('ci@example.com');
    expect(await client.unlock('CI-1', '1')).toEqual({ success: true });
    await waitForLock('CI-1', '1', 'unlocked');
    await waitForLock('CI-1', '1', 'locked');
  }, 30000);

  test('gets a clear failure from a jammed lock', async () => {
    const client = await simulator().login();
    expect(await client.unlock('CI-JAMMED', '1')).toEqual({ success: false, message: 'Lock is jammed' });
  });

  test('throws ApiError for a station the account cannot reach', async () => {
    const client = await simulator().login();
    await expect(client.getStation('NO-SUCH-STATION')).rejects.toBeInstanceOf(ApiError);
  });
});
