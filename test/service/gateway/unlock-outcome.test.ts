import { expect, test } from 'vitest';
import { rejectedOutcome } from '../../../src/service/gateway/unlock-outcome.js';

test.each([
  ['jammed', 'Lock is jammed'],
  ['low_battery', 'Battery too low'],
  ['offline', 'Station is offline'],
  ['unknown_lock', 'Station does not know this lock'],
  ['expired', 'The command reached the station too late and was not carried out'],
  ['busy', 'Station rejected the command (busy)'],
  ['<script>alert(1)</script>', 'Station rejected the command'],
  ['x'.repeat(65), 'Station rejected the command'],
])('ack reason %j → %j', (reason, message) => {
  expect(rejectedOutcome(reason)).toMatchObject({ success: false, message });
});
