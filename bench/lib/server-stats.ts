/**
 * What a server child reports while the harness loads it: its memory, the unlocks still waiting for
 * an ack, and (embedded broker, when asked) how many unlock commands and acks passed the broker.
 */
import type { StartedBroker } from '../../src/broker/embedded-broker.js';
import type { ProcessMemory } from './protocol.js';
import { collectGarbage } from './ipc.js';
import { selfProfilerMethods } from './self-profiler.js';
import { recordServerLatency } from './server-latency.js';
import { summarizeLatencies } from './stats.js';

/** Unlock commands and acks the broker received from its clients. */
export interface CommandTraffic {
  commands: number;
  acks: number;
}

export interface ServerStats {
  memory: ProcessMemory;
  /** V8 heap in use on the embedded broker's thread, when it has one (after a GC there for `gc`). */
  brokerHeapUsed?: number;
  pendingCommands: number;
  traffic?: CommandTraffic;
}

const UNLOCK = /\/locks\/[^/]+\/unlock$/;
const ACK = /\/acks$/;

/**
 * Counts, from now on, the unlock commands and acks the broker routes, through a tap inside it
 * (on its own thread, the tap's messages come back in the thread link's batches). The counts are
 * live: read them whenever needed. (One more listener on the publish path: only the soak asks.)
 */
export async function countCommandTraffic(broker: StartedBroker): Promise<CommandTraffic> {
  const traffic: CommandTraffic = { commands: 0, acks: 0 };
  await broker.tap(['#'], (topic) => {
    if (UNLOCK.test(topic)) traffic.commands += 1;
    else if (ACK.test(topic)) traffic.acks += 1;
  });
  return traffic;
}

/**
 * What every server child answers besides starting: stats, a GC then stats, its own CPU profile,
 * and on stop, the last stats after `stop` has run.
 */
export function serverChildMethods(stats: () => ServerStats | Promise<ServerStats>, stop: () => Promise<void>, broker?: () => StartedBroker | undefined) {
  /** The stats, with the broker thread's heap (after a GC there too when `collect`). */
  const withBroker = async (collect: boolean): Promise<ServerStats> => {
    const heap = await broker?.()?.threadHeapUsed?.({ collect });
    const own = await stats();
    return heap === undefined ? own : { ...own, brokerHeapUsed: heap };
  };
  const latency = recordServerLatency();
  return {
    methods: {
      ...selfProfilerMethods(),
      /** Server-side latency of the requests since the last call. */
      serverLatency: () => summarizeLatencies(latency.take()),
      stats: () => withBroker(false),
      gc: () => {
        collectGarbage();
        return withBroker(true);
      },
    },
    stop: async () => {
      latency.stop();
      await stop();
      return stats();
    },
  };
}
