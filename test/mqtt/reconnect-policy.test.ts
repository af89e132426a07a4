/**
 * The station's reconnect backoff and session watch, without a broker: the delay doubles with
 * jitter up to the longest and starts again only after a session that lasted; a session closed
 * soon after its CONNACK, again and again, is said once to be taken over.
 */
import { describe, expect, it } from 'vitest';
import { ReconnectBackoff } from '../../src/mqtt/reconnect-policy.js';
import { SessionWatch, TAKEN_OVER_AFTER, type StationLinkEvent } from '../../src/mqtt/session-watch.js';
import { seededRandom } from '../../src/station/random.js';

describe('ReconnectBackoff', () => {
  it('draws each delay from the whole window (full jitter), the window doubling up to the longest', () => {
    const backoff = new ReconnectBackoff({ firstMs: 100, maxMs: 1000, random: seededRandom(7) });
    expect(backoff.delayMs).toBe(100);
    const drawn: number[] = [];
    for (let attempt = 1; attempt <= 12; attempt += 1) {
      backoff.grow();
      const window = Math.min(100 * 2 ** attempt, 1000);
      expect(backoff.delayMs).toBeGreaterThanOrEqual(0);
      expect(backoff.delayMs).toBeLessThanOrEqual(window);
      drawn.push(backoff.delayMs);
    }
    // Spread over the window, not bunched at its top as "half plus jitter" was.
    expect(Math.min(...drawn.slice(4))).toBeLessThan(500);
    backoff.reset();
    expect(backoff.delayMs).toBe(100);
  });

  it('draws from its own stream only', () => {
    let draws = 0;
    const backoff = new ReconnectBackoff({ firstMs: 100, maxMs: 1000, random: { int: (min) => (draws += 1, min) } });
    backoff.grow();
    backoff.grow();
    expect(draws).toBe(2);
  });
});

describe('SessionWatch', () => {
  it('says takenOver once after sessions closed soon, each followed by an accepted reconnect', () => {
    let now = 0;
    const watch = new SessionWatch({ token: 'T', clientId: 'station-sim-T', maxReconnectMs: 400, wallClock: () => now });
    const events: StationLinkEvent[] = [];
    watch.onLinkEvent((event) => events.push(event));
    const connection = watch.connection();
    for (let i = 0; i <= TAKEN_OVER_AFTER + 1; i += 1) {
      connection.connected();
      now += 10;
      expect(connection.closed(false, true)).toBe(false);
    }
    expect(events.filter((event) => event.kind === 'takenOver')).toEqual([{ kind: 'takenOver', token: 'T', clientId: 'station-sim-T', closes: TAKEN_OVER_AFTER }]);
    const late: StationLinkEvent[] = [];
    watch.onLinkEvent((event) => late.push(event));
    expect(late).toEqual([{ kind: 'takenOver', token: 'T', clientId: 'station-sim-T', closes: TAKEN_OVER_AFTER + 1 }]);
  });

  it('counts a session that lasted, or that the station ended, as one the backoff starts again after', () => {
    let now = 0;
    const watch = new SessionWatch({ token: 'T', clientId: 'c', maxReconnectMs: 400, wallClock: () => now });
    const events: StationLinkEvent[] = [];
    watch.onLinkEvent((event) => events.push(event));
    const connection = watch.connection();
    connection.connected();
    now += 60_000;
    expect(connection.closed(false, true)).toBe(true);
    connection.failed(new Error('ECONNREFUSED'));
    expect(connection.closed(false, true)).toBe(false);
    connection.connected();
    expect(watch.sessionUp).toBe(true);
    expect(connection.closed(true, true)).toBe(true);
    expect(watch.sessionUp).toBe(false);
    expect(events).toEqual([
      { kind: 'up' },
      { kind: 'down', deliberate: false },
      { kind: 'retryFailed', reason: 'ECONNREFUSED' },
      { kind: 'up' },
      { kind: 'down', deliberate: true },
    ]);
  });
});
