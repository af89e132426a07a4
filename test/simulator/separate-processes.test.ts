/**
 * DESIGN.md rule 4: the API and the fleet in separate processes, meeting only on a broker we did
 * not write. The API reaches the stations only over MQTT, and so does the control plane.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { CliProcess } from '../helpers/cli-process.js';
import { mosquittoAvailable, startMosquitto, type RunningMosquitto } from '../helpers/mosquitto.js';
import { eventually } from '../helpers/eventually.js';

const available = mosquittoAvailable();

describe.runIf(available)('station-sim stations + station-sim api through a real Mosquitto', () => {
  let mosquitto: RunningMosquitto;
  let stations: CliProcess;
  let api: CliProcess;
  let apiUrl: string;
  let controlUrl: string;

  beforeAll(async () => {
    mosquitto = await startMosquitto();
    stations = new CliProcess(['stations', '--broker', mosquitto.url, '--fixture', 'fixtures/ci.json', '--json']);
    expect((await stations.readyJson()).online).toBe(24);
    api = new CliProcess(['api', '--broker', mosquitto.url, '--fixture', 'fixtures/ci.json', '--http-port', '0', '--json']);
    const ready = await api.readyJson();
    apiUrl = ready.apiUrl;
    controlUrl = ready.controlUrl;
  });

  afterAll(async () => {
    await api?.signal('SIGTERM');
    await stations?.signal('SIGTERM');
    await mosquitto?.stop();
  });

  it('runs the quick start: log in, read the station, unlock, see unlocked then locked', async () => {
    const user = createClient({ baseUrl: apiUrl, email: 'ci@example.com', password: 'ci-password' });
    const station = await user.getStation('CI-1');
    expect(station).toMatchObject({ stationId: 1, status: 'online', locks: [{ lockId: '1', status: 'locked' }, { lockId: '2', status: 'locked' }] });
    expect(await user.unlock('CI-1', '1')).toEqual({ success: true });
    await eventually(async () => expect((await user.getStation('CI-1')).locks[0]?.status).toBe('unlocked'));
    await eventually(async () => expect((await user.getStation('CI-1')).locks[0]?.status).toBe('locked'));
  });

  it('drives the fleet in the other process from the control plane', async () => {
    const response = await fetch(`${controlUrl}/stations/CI-2/connection`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ online: false }),
    });
    expect(response.status).toBe(200);
    const user = createClient({ baseUrl: apiUrl, email: 'ci@example.com', password: 'ci-password' });
    await eventually(async () => expect((await user.getStation('CI-2')).status).toBe('offline'));
    // The control plane has its own MQTT session, so it may hear the last will a moment later.
    // Health stays ready: every station came up, and one taken offline on purpose does not undo that.
    await eventually(async () => expect(await (await fetch(`${controlUrl}/health`)).json()).toMatchObject({ ready: true, stations: { online: 23, offline: 2 } }));
  });

  it('marks every station of a killed fleet process offline through the last wills', async () => {
    await stations.signal('SIGKILL');
    const user = createClient({ baseUrl: apiUrl, email: 'ci@example.com', password: 'ci-password' });
    await eventually(async () => expect((await user.getStation('CI-1')).status).toBe('offline'));
    expect(await user.unlock('CI-1', '1')).toEqual({ success: false, message: 'Station is offline' });
  });
});
