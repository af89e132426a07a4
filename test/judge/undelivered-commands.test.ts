/**
 * Commands delivered to nobody (src/fleet/undelivered-commands.ts): a backend publishing to a
 * station that is offline with a clean session reaches no station, so no station-side judge sees
 * it. The fleet's agent watches such a station's command topics while it is off, and the judge
 * says `service.command-to-offline-station`, live and again offline from the transcript. A
 * persistent session's command is the broker's to queue, judged when it arrives; a station back
 * online is not watched any more.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlClient } from '../../src/client/index.js';
import { startCarelessBackend, type StartedCarelessBackend } from '../helpers/careless-backend.js';
import { eventually } from '../helpers/eventually.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('publishes commands to stations that are offline, on purpose');

const FIXTURE = {
  stations: [
    { token: 'GONE', stationId: 1, locks: [{ lockId: '1' }] },
    { token: 'KEPT', stationId: 2, locks: [{ lockId: '1' }], behaviour: { session: 'persistent' } },
    { token: 'BACK', stationId: 3, locks: [{ lockId: '1' }] },
  ],
};

let run: StartedCarelessBackend | undefined;
let control: ControlClient;

// The simulator's clock is manual: the backend stamps sentAt from it, as one on a synchronised clock would.
const command = (commandId: string): string => JSON.stringify({ commandId, sentAt: new Date(run!.sim.clock.now()).toISOString() });
const publish = (token: string, commandId: string) => run!.backend.publishAsync(`stations/${token}/locks/1/unlock`, command(commandId), { qos: 1 });
const findings = async () => (await control.judge()).findings;

beforeAll(async () => {
  run = await startCarelessBackend({ fixture: FIXTURE, clock: 'manual' });
  control = run.control;
});
afterAll(() => run?.remove());

describe('a command published to a station that is offline with a clean session', () => {
  it('is reported with its rule and id, and the evidence says nobody got it', async () => {
    await control.setConnection('GONE', false);
    await publish('GONE', 'lost-1');
    await eventually(async () => expect((await findings()).map((finding) => finding.commandId)).toContain('lost-1'), { what: 'the finding for lost-1' });
    const [finding] = (await findings()).filter((found) => found.commandId === 'lost-1');
    expect(finding).toMatchObject({ rule: 'service.command-to-offline-station', token: 'GONE', lockId: '1' });
    expect(finding!.detail).toMatch(/offline with a clean session: the broker delivered it to nobody/);
    // Nobody got it: back online, the station's lock never opened.
    await control.setConnection('GONE', true);
    expect((await control.station('GONE')).locks[0]!.status).toBe('locked');
  });

  it('is not watched once the station is back: a command then is the station’s, and correct', async () => {
    await control.setConnection('BACK', false);
    await control.setConnection('BACK', true);
    const before = (await findings()).length;
    await publish('BACK', 'fine-1');
    // Accepted: the lock is opening (the manual clock holds it there).
    await eventually(async () => expect((await control.station('BACK')).locks[0]!.pending).toBe('opening'), { what: 'BACK to take the command' });
    expect((await findings()).length).toBe(before);
  });

  it('leaves a persistent session’s command to the broker’s queue: judged once, when it arrives', async () => {
    await control.setConnection('KEPT', false);
    await publish('KEPT', 'queued-1');
    // Back later than the skew the rule allows (2 s): the broker held the command meanwhile.
    await control.advanceClock(5000);
    await control.setConnection('KEPT', true);
    await eventually(async () => expect((await findings()).filter((found) => found.commandId === 'queued-1')).toHaveLength(1), { what: 'the finding for queued-1' });
    const [finding] = (await findings()).filter((found) => found.commandId === 'queued-1');
    expect(finding).toMatchObject({ rule: 'service.command-to-offline-station', token: 'KEPT' });
    expect(finding!.detail).not.toMatch(/nobody/);
  });

  it('gives the same verdict offline, from the transcript', async () => {
    const live = (await control.judge()).summary;
    const replay = await run!.rejudge();
    expect(replay.summary).toEqual(live);
    expect(live).toEqual({ 'service.command-to-offline-station': 2 });
  });
});
