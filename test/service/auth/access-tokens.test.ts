import { describe, expect, it } from 'vitest';
import { AccessTokens } from '../../../src/service/auth/access-tokens.js';

const secret = new TextEncoder().encode('0123456789abcdef0123456789abcdef');

describe('AccessTokens', () => {
  it('verifies a token once and still expires it on time when it is used again', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const tokens = new AccessTokens({ secret, ttlSeconds: 60, clock: { now: () => now } });
    const token = await tokens.issue({ sub: 'a@example.com', gen: 0, sid: 's-1' });
    expect(await tokens.verify(token)).toEqual({ sub: 'a@example.com', gen: 0, sid: 's-1' });
    now += 59_999;
    expect(await tokens.verify(token)).toEqual({ sub: 'a@example.com', gen: 0, sid: 's-1' });
    now += 1;
    expect(await tokens.verify(token)).toBeUndefined();
  });

  it('never trusts a token that differs by one character from a verified one', async () => {
    const tokens = new AccessTokens({ secret, ttlSeconds: 60, clock: { now: () => Date.now() } });
    const token = await tokens.issue({ sub: 'a@example.com', gen: 0, sid: 's-1' });
    expect(await tokens.verify(token)).toBeDefined();
    // Change a character well inside the signature (the last one partly encodes padding bits).
    const at = token.length - 5;
    const changed = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
    expect(await tokens.verify(changed)).toBeUndefined();
    const other = new AccessTokens({ secret: new TextEncoder().encode('another-secret-another-secret-xx'), ttlSeconds: 60, clock: { now: () => Date.now() } });
    expect(await other.verify(token)).toBeUndefined();
  });
});
