import { describe, expect, it } from 'vitest';
import { ASCII_ICONS, EMOJI_ICONS, batteryGauge, detectIconStyle, fit, formatAge, formatDue, lockLook } from '../../src/dashboard/format.js';
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
    // A caption (the narrated demo's) takes a line from the table.
    const captioned = layoutFor(80, 24, true);
    expect(captioned.tableRows + captioned.logRows + 12).toBe(23);
    expect(captioned.caption).toBe(true);
  });

  it('scrolls only as far as needed to keep the selection in view', () => {
    expect(scrollTop(0, 5, 10, 100)).toBe(0);
    expect(scrollTop(0, 10, 10, 100)).toBe(1);
    expect(scrollTop(20, 15, 10, 100)).toBe(15);
    expect(scrollTop(95, 99, 10, 100)).toBe(90);
    expect(scrollTop(0, 0, 10, 3)).toBe(0);
  });
});
