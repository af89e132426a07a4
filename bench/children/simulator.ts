/**
 * Benchmark child: the whole simulator in one process, as `station-sim up` runs it (embedded
 * broker, fleet, `/v1` API and control plane), or with `--broker`, only the fleet
 * (`station-sim stations --broker`). Ready data is `{ apiUrl?, bootMs }`; the harness then asks for
 * `stats` while it puts load on the API.
 *
 * `--with-api` keeps the API on with `--broker` (the `tls` part's unlock: one process, external broker).
 *
 *   simulator.ts --fixture F [--broker mqtt://…] [--with-api] [--count-messages]
 */
import { parseArgs } from 'node:util';
import type { StartedSimulator } from '../../src/simulator/start-simulator.js';
import type * as SimulatorModule from '../../src/simulator/start-simulator.js';
import { importProduct } from '../lib/product.js';

const { startSimulator } = await importProduct<typeof SimulatorModule>('simulator/start-simulator');
import { serveParent } from '../lib/ipc.js';
import { processMemory } from '../lib/protocol.js';
import { countCommandTraffic, serverChildMethods, type CommandTraffic, type ServerStats } from '../lib/server-stats.js';

const { values } = parseArgs({
  options: { fixture: { type: 'string' }, broker: { type: 'string' }, 'with-api': { type: 'boolean', default: false }, 'count-messages': { type: 'boolean', default: false } },
});
let sim: StartedSimulator | undefined;
let traffic: CommandTraffic | undefined;

const stats = (): ServerStats => ({
  memory: processMemory(),
  pendingCommands: sim?.http?.api.gateway.pendingCommands ?? 0,
  ...(traffic ? { traffic: { ...traffic } } : {}),
});

await serveParent(
  async () => {
    const started = performance.now();
    sim = await startSimulator({ fixture: values.fixture!, ...(values.broker ? { broker: values.broker, http: values['with-api'] === true } : {}) });
    if (values['count-messages'] && sim.broker) traffic = await countCommandTraffic(sim.broker);
    return { apiUrl: sim.apiUrl, bootMs: performance.now() - started, online: sim.fleet.onlineCount() };
  },
  serverChildMethods(
    stats,
    async () => {
      await sim?.stop();
    },
    () => sim?.broker,
  ),
);
