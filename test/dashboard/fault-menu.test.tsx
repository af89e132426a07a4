/** The fault menu's two columns never run together: at 100 columns they read `…the API times out4 ackNoOpen`. */
import { render } from 'ink-testing-library';
import { expect, it } from 'vitest';
import { FaultMenu, twoColumns } from '../../src/dashboard/FaultMenu.js';
import { FAULT_MENU } from '../../src/dashboard/dashboard-actions.js';
import { makeStation } from './fake-control-plane.js';
import { stripAnsi } from './terminal.js';

/** The menu's item lines: `1 dropCommands …`, one or two items each. */
function itemLines(frame: string): string[] {
  return stripAnsi(frame)
    .split('\n')
    .filter((line) => /^\d /.test(line));
}

it('keeps at least three spaces between the columns at 100 columns, as ink-testing-library draws it', () => {
  const view = render(<FaultMenu station={makeStation(1)} lockId="1" scope="lock" apiFaults={[]} height={6} width={100} />);
  const lines = itemLines(view.lastFrame() ?? '');
  view.unmount();
  expect(lines).toHaveLength(3);
  for (const [row, line] of lines.entries()) {
    const right = FAULT_MENU.length / 2 + row + 1;
    expect(line.length, line).toBeLessThanOrEqual(100);
    // The right column's item starts after a gap of spaces, and every item is there.
    expect(line, line).toMatch(new RegExp(`^${row + 1} \\S.*\\S {3,}${right} ${FAULT_MENU[right - 1]!.kind} `));
  }
  expect(lines[0]).toContain('no ack, the API times out');
});

it('keeps the columns apart at every width from 100 on, cutting the left one with … rather than running them together', () => {
  const items = ['1 short', `2 ${'x'.repeat(70)}`, '3 mid item', '4 right one', `5 ${'y'.repeat(40)}`, '6 z'];
  for (let width = 100; width <= 160; width += 1) {
    const rows = twoColumns(items, width);
    expect(rows).toHaveLength(3);
    for (const [row, line] of rows.entries()) {
      expect(line.length, `width ${width}`).toBeLessThanOrEqual(width);
      expect(line, `width ${width}`).toMatch(new RegExp(` {3}${row + 4} `));
    }
    expect(rows[1], `width ${width}`).toMatch(width >= 72 + 3 + 42 ? /x {3}/ : /x… {2}/);
  }
});
