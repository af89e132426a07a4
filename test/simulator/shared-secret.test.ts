/**
 * A Redis session store without a shared JWT secret is refused by the library too, whether the
 * store comes from the options or from the fixture's `api.state`, before anything connects.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { startApiProcess, startSimulator } from '../../src/simulator/start-simulator.js';

const ci = JSON.parse(readFileSync('fixtures/ci.json', 'utf8')) as Record<string, any>;
delete ci.$schema;

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('a shared session store needs a shared secret', () => {
  it("refuses a fixture's api.state without STATION_SIM_JWT_SECRET, naming the variable and no password", async () => {
    vi.stubEnv('STATION_SIM_JWT_SECRET', '');
    const fixture = { ...ci, api: { ...ci.api, state: 'redis://:pw-secret@127.0.0.1:1' } };
    const refused = startSimulator({ fixture });
    await expect(refused).rejects.toMatchObject({ code: 'JWT_SECRET_REQUIRED' });
    await expect(refused).rejects.toThrow(/STATION_SIM_JWT_SECRET/);
    await expect(refused).rejects.not.toThrow(/pw-secret/);
  });

  it('refuses the state option of startApiProcess likewise', async () => {
    vi.stubEnv('STATION_SIM_JWT_SECRET', '');
    await expect(startApiProcess({ fixture: 'ci', broker: 'mqtt://127.0.0.1:1', state: 'redis://127.0.0.1:1' })).rejects.toMatchObject({ code: 'JWT_SECRET_REQUIRED' });
  });

  it('lets a fleet-only process (no API) start without one', async () => {
    vi.stubEnv('STATION_SIM_JWT_SECRET', '');
    const fixture = { ...ci, api: { ...ci.api, state: 'redis://127.0.0.1:1' } };
    const sim = await startSimulator({ fixture, http: false });
    await sim.stop();
  });
});
