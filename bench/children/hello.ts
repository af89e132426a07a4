/**
 * Benchmark child: the baseline server, a bare fastify answering `GET /` with `{"hello":"world"}`
 * (fastify's own benchmark), on a free port. Ready data is `{ url }`.
 */
import Fastify from 'fastify';
import { serveParent } from '../lib/ipc.js';
import { processMemory } from '../lib/protocol.js';
import { recordServerLatency } from '../lib/server-latency.js';
import { summarizeLatencies } from '../lib/stats.js';

const app = Fastify({ logger: false });
const latency = recordServerLatency();
app.get('/', async () => ({ hello: 'world' }));

await serveParent(
  async () => {
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url };
  },
  {
    methods: { stats: () => ({ memory: processMemory(), pendingCommands: 0 }), serverLatency: () => summarizeLatencies(latency.take()) },
    stop: async () => {
      await app.close();
    },
  },
);
