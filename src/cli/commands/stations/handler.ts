/** What `stations` does: the virtual fleet alone, or one shard of it, on an external broker until a stop signal. */
import { startSimulator } from '../../../simulator/start-simulator.js';
import type { StartedFleet } from '../../../fleet/start-fleet.js';
import { notice, printReady, UsageError, type CliIo } from '../../output.js';
import { checkReportPath, judgeOutletsOf, stopJudged } from '../../judge-notice.js';
import { BrokerNotices, watchFleet } from '../../broker-notices.js';
import { runUntilSignal } from '../../run-until-signal.js';
import { brokerTlsOption, heartbeatRateOption, seedOf } from '../../option-checks.js';
import { SHARD_INDEX_VARIABLE, type StationsFlags } from './options.js';

export async function runStations(io: CliIo, argv: StationsFlags): Promise<void> {
  const shard = argv['shard-from-env'] === undefined ? parseShard(argv.shard) : shardFromEnv(argv['shard-from-env'], process.env);
  const judge = judgeOutletsOf(argv);
  await checkReportPath(judge);
  const sim = await startSimulator({
    ...(shard ? { shard } : {}),
    fixture: argv.fixture,
    seed: seedOf(argv),
    broker: argv.broker,
    ...brokerTlsOption(argv),
    http: false,
    ...heartbeatRateOption(argv),
    onNotice: (message) => notice(io, message),
  });
  const summary = fleetSummary(sim.fleet);
  const part = shard ? ` (shard ${shard.index}/${shard.count})` : '';
  // One line when the broker is lost and one when it is back; one if a station is run twice.
  const notices = new BrokerNotices({ broker: sim.mqttUrl, notify: (message) => notice(io, message), meanwhile: 'the stations keep reconnecting' });
  const unwatch = watchFleet(sim.fleet.stations.values(), notices, (message) => notice(io, message));
  // Signals are ours before the ready line goes out: a supervisor may send SIGTERM the moment it reads it.
  const stopped = runUntilSignal(io, async () => {
    unwatch();
    await stopJudged(io, sim, judge);
  });
  printReady(io, argv.json, `station-sim stations: ${summary.text}${part} on ${sim.mqttUrl} · seed ${sim.seed} · Ctrl-C to stop`, {
    mqttUrl: sim.mqttUrl,
    stations: summary.total,
    online: summary.online,
    seed: sim.seed,
  });
  await stopped;
}

function parseShard(text: string | undefined): { index: number; count: number } | undefined {
  if (text === undefined) return undefined;
  const found = /^(\d+)\/(\d+)$/.exec(text);
  const index = Number(found?.[1]);
  const count = Number(found?.[2]);
  if (!found || index < 1 || count < 1 || index > count) throw new UsageError(`--shard must be k/n with 1 <= k <= n, not "${text}"`);
  return { index, count };
}

/** `--shard-from-env n`: shard JOB_COMPLETION_INDEX + 1 of n, checked as `--shard` is. */
function shardFromEnv(countText: string, env: NodeJS.ProcessEnv): { index: number; count: number } {
  if (!/^\d+$/.test(countText) || Number(countText) < 1) throw new UsageError(`--shard-from-env must be the number of shards n >= 1, not "${countText}"`);
  const count = Number(countText);
  const indexText = env[SHARD_INDEX_VARIABLE];
  if (indexText === undefined) throw new UsageError(`--shard-from-env needs ${SHARD_INDEX_VARIABLE} (set by Kubernetes in each pod of an Indexed Job), and it is not set`);
  if (!/^\d+$/.test(indexText) || Number(indexText) >= count) {
    throw new UsageError(`${SHARD_INDEX_VARIABLE} must be 0 to ${count - 1} with --shard-from-env ${count}, not "${indexText}": does the Job's completions equal n?`);
  }
  return { index: Number(indexText) + 1, count };
}

export function fleetSummary(fleet: StartedFleet): { total: number; online: number; text: string } {
  const total = fleet.stations.size;
  const online = fleet.onlineCount();
  const offline = total - online;
  return { total, online, text: `${total} stations (${online} online${offline > 0 ? `, ${offline} offline` : ''})` };
}
