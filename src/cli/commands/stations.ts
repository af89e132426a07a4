import type { CommandModule } from 'yargs';
import { startSimulator } from '../../simulator/start-simulator.js';
import type { StartedFleet } from '../../fleet/start-fleet.js';
import { notice, printReady, UsageError, type CliIo } from '../output.js';
import { checkReportPath, judgeOutletsOf, stopJudged } from '../judge-notice.js';
import { BrokerNotices, watchFleet } from '../broker-notices.js';
import { runUntilSignal } from '../run-until-signal.js';
import { seedOf, brokerTlsOption, heartbeatRateOption, withBroker, withFixture, withHeartbeatRate, withJson, withJudgeReport, withSeed } from '../options.js';

export function stationsCommand(io: CliIo): CommandModule {
  return {
    command: 'stations',
    describe: 'Run only the virtual fleet, against any MQTT broker',
    builder: (yargs) =>
      withHeartbeatRate(withJudgeReport(withBroker(withJson(withSeed(withFixture(yargs))), true))).option('shard', {
        type: 'string',
        describe: 'Run only shard k of n of the fleet (k/n, e.g. 2/4): station i goes to shard (i mod n) + 1',
      }),
    handler: async (argv) => {
      const shard = parseShard(argv.shard as string | undefined);
      const judge = judgeOutletsOf(argv);
      await checkReportPath(judge);
      const sim = await startSimulator({
        ...(shard ? { shard } : {}),
        fixture: argv.fixture as string | undefined,
        seed: seedOf(argv),
        broker: argv.broker as string,
        ...brokerTlsOption(argv),
        http: false,
        ...heartbeatRateOption(argv),
        onNotice: (message) => notice(io, message),
      });
      const summary = fleetSummary(sim.fleet);
      const part = shard ? ` (shard ${shard.index}/${shard.count})` : '';
      printReady(io, argv.json as boolean, `station-sim stations: ${summary.text}${part} on ${sim.mqttUrl} · seed ${sim.seed} · Ctrl-C to stop`, {
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
