/**
 * Benchmark child: the `/v1` API alone against an external broker, as `station-sim api --broker`
 * runs it (`startApiProcess`). Ready data is `{ apiUrl }`.
 *
 *   api.ts --fixture F --broker mqtt://127.0.0.1:P
 */
import { parseArgs } from 'node:util';
import type { StartedApiProcess } from '../../src/simulator/start-simulator.js';
import type * as SimulatorModule from '../../src/simulator/start-simulator.js';
import { importProduct } from '../lib/product.js';

const { startApiProcess } = await importProduct<typeof SimulatorModule>('simulator/start-simulator');
import { serveParent } from '../lib/ipc.js';
import { processMemory } from '../lib/protocol.js';
import { serverChildMethods, type ServerStats } from '../lib/server-stats.js';

const { values } = parseArgs({ options: { fixture: { type: 'string' }, broker: { type: 'string' } } });
let api: StartedApiProcess | undefined;

const stats = (): ServerStats => ({ memory: processMemory(), pendingCommands: api?.api.gateway.pendingCommands ?? 0 });

await serveParent(
  async () => {
    api = await startApiProcess({ fixture: values.fixture!, broker: values.broker! });
    return { apiUrl: api.apiUrl };
  },
  serverChildMethods(stats, async () => {
    await api?.stop();
  }),
);
