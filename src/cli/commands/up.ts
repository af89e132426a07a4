import type { CommandModule } from 'yargs';
import { startSimulator } from '../../simulator/start-simulator.js';
import { printReady, notice, UsageError, type CliIo } from '../output.js';
import { checkReportPath, judgeOutletsOf, stopJudged } from '../judge-notice.js';
import { runUntilSignal } from '../run-until-signal.js';
import {
  DEFAULT_HTTP_PORT,
  DEFAULT_MQTT_PORT,
  checkPort,
  controlAccess,
  httpOptions,
  seedOf,
  withBroker,
  withBrokerThread,
  withBrokerSecurity,
  brokerSecurityOptions,
  withFixture,
  withHost,
  withHttp,
  withJson,
  withMqttPort,
  withSeed,
  withTime,
  timeOptions,
  brokerTlsOption,
  withJudgeReport,
} from '../options.js';
import { fleetSummary } from './stations.js';
import { apiBrokerNotices } from './api.js';
import { brokerListeners, watchConnection, watchFleet } from '../broker-notices.js';
import { runDashboard, runDashboardUntilDone, unlockAs } from './dashboard.js';
import { NOT_A_TTY_MESSAGE } from '../../dashboard/index.js';
import { SimError } from '../../errors.js';

export function upCommand(io: CliIo): CommandModule {
  return {
    command: 'up',
    describe: 'Run everything: embedded MQTT broker, the virtual fleet, the /v1 API and the /sim/v1 control plane',
    builder: (yargs) =>
      withJudgeReport(withBrokerSecurity(withTime(withHttp(withBroker(withBrokerThread(withMqttPort(withHost(withJson(withSeed(withFixture(yargs)))))), false))))).option('dashboard', {
        type: 'string',
        describe: 'Show the live dashboard (--dashboard); "auto" shows it only in an interactive terminal',
        coerce: (value: string) => (value === '' || value === 'true' ? 'on' : value),
        choices: ['on', 'auto', 'off'],
      }),
    handler: async (argv) => {
      const mqttPort = argv['mqtt-port'] as number | undefined;
      checkPort('mqtt-port', mqttPort);
      // Both options shape the embedded broker, which --broker replaces: silently ignoring them would
      // leave someone waiting on a port nothing listens on.
      if (argv.broker !== undefined && mqttPort !== undefined) {
        throw new UsageError('--mqtt-port is the embedded broker\'s port; with --broker there is no embedded broker (the port is in the URL)');
      }
      if (argv.broker !== undefined && argv['broker-thread'] === false) {
        throw new UsageError('--no-broker-thread is about the embedded broker; with --broker there is no embedded broker');
      }
      const brokerSecurity = brokerSecurityOptions(argv);
      if (argv.broker !== undefined && Object.keys(brokerSecurity).length > 0) {
        throw new UsageError('--broker-auth, --insecure-broker, --broker-tls-port and --broker-ws-port are about the embedded broker; with --broker there is no embedded broker');
      }
      const http = httpOptions(argv);
      const judge = judgeOutletsOf(argv);
      await checkReportPath(judge);
      const host = argv.host as string;
      const dashboard = (argv.dashboard as string | undefined) ?? 'off';
      // Ink draws only its last frame when CI is set, so "auto" leaves the dashboard out there.
      const withDashboard = dashboard === 'on' || (dashboard === 'auto' && process.stdout.isTTY === true && !argv.json && !process.env.CI);
      if (dashboard === 'on' && argv.json) throw new UsageError('--dashboard on and --json do not go together: the dashboard takes the terminal that the JSON line goes to');
      if (dashboard === 'on' && !process.stdout.isTTY) throw new SimError('BAD_REQUEST', NOT_A_TTY_MESSAGE);
      const sim = await startSimulator({
        ...http,
        ...timeOptions(argv),
        fixture: argv.fixture as string | undefined,
        seed: seedOf(argv),
        broker: argv.broker as string | undefined,
        ...brokerTlsOption(argv),
        host,
        mqttPort: mqttPort ?? DEFAULT_MQTT_PORT,
        // A port falls back to a free one only when it was not given explicitly.
        mqttFallbackToFreePort: mqttPort === undefined,
        brokerThread: argv['broker-thread'] as boolean,
        ...brokerSecurity,
        onNotice: (message) => notice(io, message),
      });
      if (sim.broker?.fellBack) {
        notice(io, `MQTT port ${DEFAULT_MQTT_PORT} is taken (a local Mosquitto?); the embedded broker uses ${sim.broker.port} instead`);
      }
      if (sim.http?.api.fellBack) notice(io, `HTTP port ${DEFAULT_HTTP_PORT} is taken; the API uses ${sim.http.api.port} instead`);
      notice(io, controlAccess(host, http.controlToken, argv['control-token'] !== undefined, sim.broker !== undefined && !sim.broker.auth));
      const summary = fleetSummary(sim.fleet);
      const listeners = sim.broker ? brokerListeners(sim.broker) : { text: '', json: {} };
      printReady(
        io,
        argv.json as boolean,
        `station-sim up: API ${sim.apiUrl} · control ${sim.controlUrl} · MQTT ${sim.mqttUrl}${listeners.text} · ${summary.text} · seed ${sim.seed} · Ctrl-C to stop`,
        { apiUrl: sim.apiUrl, controlUrl: sim.controlUrl, mqttUrl: sim.mqttUrl, ...listeners.json, stations: summary.total, online: summary.online, seed: sim.seed },
      );
      if (withDashboard && sim.apiUrl) {
        const account = sim.fixture.accounts[0];
        const unlock = account
          ? unlockAs(sim.apiUrl, account.email, account.password)
          : async () => ({ success: false, message: 'the fixture has no account to unlock as' });
        // The dashboard owns the terminal until the user quits or a signal comes; then everything stops.
        // Ages and countdowns are drawn on the simulator's clock: it runs scaled or manual with --time-scale / --clock.
        const dashboard = runDashboard({ url: sim.apiUrl, unlock, controlToken: http.controlToken, simulatedClock: sim.clock });
        await runDashboardUntilDone(io, dashboard, async () => {
          await stopJudged(io, sim, judge);
        });
        return;
      }
      // With a broker of its own the process cannot lose it; with an external one, say when it
      // does (not under the dashboard, which has the terminal and shows its own connection state).
      // A station of this fleet run by another process too (a `stations` shard) is said as well.
      const unwatch =
        argv.broker !== undefined && sim.http
          ? [watchConnection(sim.http.control.channel, apiBrokerNotices(io, sim.mqttUrl)), watchFleet(sim.fleet.stations.values(), undefined, (message) => notice(io, message))]
          : [];
      await runUntilSignal(io, async () => {
        for (const stop of unwatch) stop();
        await stopJudged(io, sim, judge);
      });
    },
  };
}
