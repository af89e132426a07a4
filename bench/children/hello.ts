/**
 * Benchmark child: the baseline server, a bare fastify answering `GET /` with `{"hello":"world"}`
 * (fastify's own benchmark), on a free port. Ready data is `{ url }`.
 */
import Fastify from 'fastify';
import { serveParent } from '../lib/ipc.js';
import { processMemory } from '../lib/protocol.js';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));

await serveParent(
  async () => {
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url };
  },
  {
    methods: { stats: () => ({ memory: processMemory(), pendingCommands: 0 }) },
    stop: async () => {
      await app.close();
    },
  },
);
