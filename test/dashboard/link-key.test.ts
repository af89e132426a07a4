/**
 * `l` in the dashboard: the selected station's link to the next profile (docs/links.md), through the
 * real control plane; a station whose fixture gives it no link fails with the control plane's reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlClient } from '../../src/client/index.js';
import { createDashboardActions, nextLinkProfile } from '../../src/dashboard/dashboard-actions.js';
import { FleetStore } from '../../src/dashboard/fleet-store.js';
import type { ActionEntry } from '../../src/dashboard/activity-log.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';

let sim: StartedSimulator<true>;
let control: ControlClient;
let store: FleetStore;

beforeAll(async () => {
  sim = await startSimulator({
    fixture: {
      stations: [
        { token: 'LINKED', stationId: 1, locks: [{ lockId: '1' }], behaviour: { link: 'perfect' } },
        { token: 'PLAIN', stationId: 2, locks: [{ lockId: '1' }] },
      ],
    },
  });
  control = new ControlClient({ url: sim.controlUrl });
  store = new FleetStore();
});
afterAll(async () => {
  await sim?.stop();
});

const actionsOf = (token: string): ActionEntry[] => store.log.entries.filter((entry): entry is ActionEntry => entry.kind === 'action' && entry.token === token);

describe('the link key', () => {
  it('names the next profile after a link, a custom one and none going to the first', () => {
    expect(nextLinkProfile('perfect')).toBe('lte-m');
    expect(nextLinkProfile('nb-iot (800 ± 400 ms, 2 % loss, 26 kbit/s)')).toBe('wifi-weak');
    expect(nextLinkProfile('half-open (carries nothing)')).toBe('perfect');
    expect(nextLinkProfile('custom (200 ms)')).toBe('perfect');
  });

  it('moves the station through the profiles and back to perfect', async () => {
    const actions = createDashboardActions({ control, store, accounts: [] });
    const seen: string[] = [];
    for (let press = 0; press < 5; press += 1) {
      await actions.cycleLink(await control.station('LINKED'));
      seen.push((await control.station('LINKED')).link!.split(' ')[0]!);
    }
    expect(seen).toEqual(['lte-m', 'nb-iot', 'wifi-weak', 'half-open', 'perfect']);
    const lines = actionsOf('LINKED');
    expect(lines.map((entry) => entry.label)).toEqual(['lte-m', 'nb-iot', 'wifi-weak', 'half-open', 'perfect'].map((name) => `LINKED link → ${name}`));
    expect(lines.every((entry) => entry.outcome?.ok === true)).toBe(true);
  });

  it('says why a station without a link has none to change', async () => {
    const actions = createDashboardActions({ control, store, accounts: [] });
    await actions.cycleLink(await control.station('PLAIN'));
    const [line] = actionsOf('PLAIN');
    expect(line).toMatchObject({ label: 'PLAIN link → perfect', outcome: { ok: false } });
    expect(line!.outcome!.message).toMatch(/link/);
    expect((await control.station('PLAIN')).link).toBeUndefined();
  });
});
