import type { CommandModule } from 'yargs';
import { startSimulator } from '../../simulator/start-simulator.js';
import type { StartedFleet } from '../../fleet/start-fleet.js';
import { notice, printReady, UsageError, type CliIo } from '../output.js';
import { checkReportPath, judgeOutletsOf, stopJudged } from '../judge-notice.js';
import { BrokerNotices, watchFleet } from '../broker-notices.js';
import { runUntilSignal } from '../run-until-signal.js';
import {
  FIXTURE_OPTIONS,
  HEARTBEAT_OPTIONS,
  JSON_OPTIONS,
  JUDGE_REPORT_OPTIONS,
  REQUIRED_BROKER_OPTIONS,
  SEED_OPTIONS,
  brokerTlsOption,
  heartbeatRateOption,
  seedOf,
  type FlagsOf,
  type OptionGroup,
} from '../options.js';

/** `stations`' options, in the order --help lists them. */
const STATIONS_OPTIONS = {
  ...FIXTURE_OPTIONS,
  ...SEED_OPTIONS,
  ...JSON_OPTIONS,
  ...REQUIRED_BROKER_OPTIONS,
  ...JUDGE_REPORT_OPTIONS,
  ...HEARTBEAT_OPTIONS,
  shard: {
    type: 'string',
    describe: 'Run only shard k of n of the fleet (k/n, e.g. 2/4): station i goes to shard (i mod n) + 1',
  },
} as const satisfies OptionGroup;

/** The flags `stations`' handler sees. */
export type StationsFlags = FlagsOf<typeof STATIONS_OPTIONS>;

export function stationsCommand(io: CliIo): CommandModule<object, StationsFlags> {
  return {
    command: 'stations',
    describe: 'Run only the virtual fleet, against any MQTT broker',
    builder: (yargs) => yargs.options(STATIONS_OPTIONS),
    handler: async (argv: StationsFlags) => {
      const shard = parseShard(argv.shard);
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
      printReady(io, argv.json, `station-sim stations: ${summary.text}${part} on ${sim.mqttUrl} · seed ${sim.seed} · Ctrl-C to stop`, {
        mqttUrl: sim.mqttUrl,
        stations: summary.total,
        online: summary.online,
        seed: sim.seed,
      });
      // One line when the broker is lost and one when it is back; one if a station is run twice.
      const notices = new BrokerNotices({ broker: sim.mqttUrl, notify: (message) => notice(io, message), meanwhile: 'the stations keep reconnecting' });
      const unwatch = watchFleet(sim.fleet.stations.values(), notices, (message) => notice(io, message));
      await runUntilSignal(io, async () => {
        unwatch();
        await stopJudged(io, sim, judge);
      });
    },
  };
}

function parseShard(text: string | undefined): { index: number; count: number } | undefined {
  if (text === undefined) return undefined;
  const found = /^(\d+)\/(\d+)$/.exec(text);
  const index = Number(found?.[1]);
  const count = Number(found?.[2]);
  if (!found || index < 1 || count < 1 || index > count) throw new UsageError(`--shard must be k/n with 1 <= k <= n, not "${text}"`);
  return { index, count };
}

export function fleetSummary(fleet: StartedFleet): { total: number; online: number; text: string } {
  const total = fleet.stations.size;
  const online = fleet.onlineCount();
  const offline = total - online;
  return { total, online, text: `${total} stations (${online} online${offline > 0 ? `, ${offline} offline` : ''})` };
}
