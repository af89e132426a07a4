/**
 * The testing helpers' own rules (src/testing): `login(email)` finds the fixture account the way
 * the API's login does, so a suite that logs in with the email as its users type it works.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSimulator } from '../../src/testing/index.js';

const simulator = withSimulator({ beforeAll, afterAll }, { fixture: 'fixtures/ci.json' });

describe('testing helpers: login', () => {
  it('matches the email without regard to case or surrounding spaces, as the API does', async () => {
    const client = await simulator().login('  CI@Example.COM ');
    expect(await client.unlock('CI-1', '2')).toEqual({ success: true });
  });

  it('names an email the fixture does not have', async () => {
    await expect(simulator().login('nobody@example.com')).rejects.toThrow('the fixture has no account nobody@example.com');
  });
});
