import { describe, expect, it } from 'vitest';
import { ASCII_ICONS, EMOJI_ICONS, batteryGauge, detectIconStyle, fit, formatAge, formatDue, formatMs, lockLook, sparkline } from '../../src/dashboard/format.js';
import { noColourRequested } from '../../src/dashboard/Text.js';
import { addressPieces, brokerMode } from '../../src/dashboard/addresses.js';
import { latencySlots, summariseLatencies } from '../../src/dashboard/unlock-latency.js';
import { layoutFor, scrollTop } from '../../src/dashboard/layout.js';

const battery = { drainPerUnlockV: 0.01, drainPerHourV: 0.005, cutoffV: 11.5 };

describe('formatting', () => {
  it('draws the battery from its cutoff (empty) to 12.6 V (full), coloured by level', () => {
    expect(batteryGauge(12.6, battery, EMOJI_ICONS)).toEqual({ bar: '█████', level: 'good' });
    expect(batteryGauge(12.41, battery, EMOJI_ICONS)).toEqual({ bar: '████░', level: 'good' });
    expect(batteryGauge(11.7, battery, ASCII_ICONS)).toEqual({ bar: '#....', level: 'low' });
    expect(batteryGauge(11.2, battery, ASCII_ICONS)).toEqual({ bar: '.....', level: 'empty' });
  });

  it('cuts a token in the middle, where tokens with a long common prefix still differ', () => {
    expect(fit('warehouse-north-gate-0001', 16, 'middle')).toBe('warehous…te-0001');
    expect(fit('ST-1001', 16, 'middle')).toBe('ST-1001         ');
    expect(fit('warehouse-north-gate-0001', 16)).toBe('warehouse-north…');
  });

  it('reads ages and timers as a person would say them', () => {
    expect([3_400, 125_000, 7_200_000, 200_000_000, Number.NaN].map(formatAge)).toEqual(['3s ago', '2m ago', '2h ago', '2d ago', '-']);
    expect([3_240, 25_000, 300_000, -5].map(formatDue)).toEqual(['in 3.2s', 'in 25s', 'in 5m', 'due']);
  });

  it('shows a jam before a pending unlock, and that before the status', () => {
    expect(lockLook({ lockId: '1', status: 'jammed', lastUpdated: '', pending: 'opening' })).toBe('jammed');
    expect(lockLook({ lockId: '1', status: 'locked', lastUpdated: '', pending: 'opening' })).toBe('opening');
    expect(lockLook({ lockId: '1', status: 'unlocked', lastUpdated: '', pending: 'open' })).toBe('unlocked');
  });

  it('falls back to ASCII icons where emoji will not show', () => {
    expect(detectIconStyle({ TERM: 'xterm-256color', LANG: 'en_GB.UTF-8' })).toBe('emoji');
    expect(detectIconStyle({ TERM: 'xterm-256color' })).toBe('emoji');
    expect(detectIconStyle({ TERM: 'linux', LANG: 'en_GB.UTF-8' })).toBe('ascii');
    expect(detectIconStyle({ TERM: 'xterm', LC_ALL: 'C' })).toBe('ascii');
  });
});

describe('layout', () => {
  it('fills one line less than the terminal', () => {
    const layout = layoutFor(80, 24);
    expect(layout.height).toBe(23);
    // Header, addresses, status, table header, five lines of detail, log title, footer.
    expect(layout.tableRows + layout.logRows + 11).toBe(23);
    // The log keeps its timestamps at 80 columns.
    expect(layout.showClock).toBe(true);
    // A caption (the narrated demo's two lines) takes its lines from the table and the log.
    const captioned = layoutFor(80, 24, 2);
    expect(captioned.tableRows + captioned.logRows + 13).toBe(23);
    expect(captioned.captionLines).toBe(2);
  });

  it('scrolls only as far as needed to keep the selection in view', () => {
    expect(scrollTop(0, 5, 10, 100)).toBe(0);
    expect(scrollTop(0, 10, 10, 100)).toBe(1);
    expect(scrollTop(20, 15, 10, 100)).toBe(15);
    expect(scrollTop(95, 99, 10, 100)).toBe(90);
    expect(scrollTop(0, 0, 10, 3)).toBe(0);
  });
});

describe('sparklines and latency', () => {
  it('draws one cell per value between the range given, blanks where there is none', () => {
    expect(sparkline([0, 1, 2, 3, 4, 5, 6, 7], 8, EMOJI_ICONS.spark)).toBe('▁▂▃▄▅▆▇█');
    expect(sparkline([11.5, undefined, 12.6], 3, ASCII_ICONS.spark, { min: 11.5, max: 12.6 })).toBe('_ #');
    // The last `width` values; a flat series sits in the middle.
    expect(sparkline([9, 1, 1, 1], 3, EMOJI_ICONS.spark)).toBe('▄▄▄');
    expect(sparkline([], 4, EMOJI_ICONS.spark)).toBe('');
    expect(formatMs(850)).toBe('850ms');
    expect(formatMs(2440)).toBe('2.4s');
  });

  it('puts the slowest unlock of each slot of the last five minutes, and sums them up', () => {
    const now = 1_000_000;
    const latencies = [
      { at: now - 400_000, token: 'A', lockId: '1', ms: 9000 },
      { at: now - 290_000, token: 'A', lockId: '1', ms: 800 },
      { at: now - 280_000, token: 'B', lockId: '2', ms: 1200 },
      { at: now - 1000, token: 'C', lockId: '1', ms: 3000 },
    ];
    // The first is older than the window; slot 0 holds the slower of the two in it.
    expect(latencySlots(latencies, now, 5)).toEqual([1200, undefined, undefined, undefined, 3000]);
    const summary = summariseLatencies(latencies, now, 2);
    expect(summary).toMatchObject({ count: 3, median: 1200, p95: 3000 });
    expect(summary.slowest.map((each) => `${each.token}/${each.lockId}`)).toEqual(['C/1', 'B/2']);
  });
});

describe('NO_COLOR', () => {
  it('is asked for by any non-empty value (https://no-color.org)', () => {
    expect(noColourRequested({ NO_COLOR: '1' })).toBe(true);
    expect(noColourRequested({ NO_COLOR: 'false' })).toBe(true);
    expect(noColourRequested({ NO_COLOR: '' })).toBe(false);
    expect(noColourRequested({})).toBe(false);
  });
});

describe('the broker as the header names it', () => {
  it('says embedded or external, TLS by the URL, authentication, and the other listeners', () => {
    expect(brokerMode({ url: 'mqtt://127.0.0.1:1883', embedded: true })).toBe('embedded');
    expect(brokerMode({ url: 'mqtts://broker.example:8883', embedded: false })).toBe('external, TLS');
    expect(brokerMode({ url: 'mqtt://127.0.0.1:1883', embedded: true, auth: true, listeners: ['TLS mqtts://127.0.0.1:8883', 'WebSocket wss://127.0.0.1:9001'] })).toBe(
      'embedded, auth, +TLS, +WebSocket',
    );
    expect(addressPieces({ api: 'http://127.0.0.1:8080/' }).map((piece) => `${piece.label} ${piece.value}`)).toEqual(['API http://127.0.0.1:8080/', 'control http://127.0.0.1:8080/sim/v1']);
  });
});
