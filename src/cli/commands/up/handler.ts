/** What `up` does: broker, fleet, /v1 API and control plane in this process, until a stop signal or the dashboard's `q`. */
import { startSimulator, type StartedSimulator } from '../../../simulator/start-simulator.js';
import { printReady, notice, UsageError, type CliIo } from '../../output.js';
import { checkReportPath, judgeOutletsOf, stopJudged } from '../../judge-notice.js';
import { runUntilSignal } from '../../run-until-signal.js';
import { DEFAULT_HTTP_PORT, DEFAULT_MQTT_PORT } from '../../options.js';
import { brokerSecurityOptions, brokerTlsOption, checked, controlAccess, heartbeatRateOption, httpOptions, seedOf, timeOptions } from '../../option-checks.js';
import type { UpFlags } from './options.js';
import { fleetSummary } from '../stations/handler.js';
import { apiBrokerNotices } from '../api/handler.js';
import { brokerListeners, watchConnection, watchFleet } from '../../broker-notices.js';
import { NOT_A_TTY_MESSAGE } from '../../../dashboard/not-a-tty.js';
import type { DashboardAddresses } from '../../../dashboard/index.js';
import { SimError } from '../../../errors.js';

export async function runUp(io: CliIo, argv: UpFlags): Promise<void> {
  const { mqttPort, brokerSecurity } = embeddedBrokerFlags(argv);
  const http = httpOptions(argv);
  const judge = judgeOutletsOf(argv);
  await checkReportPath(judge);
  const host = argv.host;
  const withDashboard = dashboardWanted(argv);
  // Said on stderr as they come, and kept for the dashboard: once it takes the screen over, the
  // lines above it are gone from view (and, redrawn in place, from the scrollback).
  const notices: string[] = [];
  const say = (message: string): void => {
    notices.push(message);
    notice(io, message);
  };
  const sim = await startSimulator({
    ...http,
    ...timeOptions(argv),
    fixture: argv.fixture,
    seed: seedOf(argv),
    broker: argv.broker,
    ...brokerTlsOption(argv),
    host,
    mqttPort: mqttPort ?? DEFAULT_MQTT_PORT,
    // A port falls back to a free one only when it was not given explicitly.
    mqttFallbackToFreePort: mqttPort === undefined,
    brokerThread: argv['broker-thread'],
    ...heartbeatRateOption(argv),
    ...brokerSecurity,
    onNotice: say,
  });
  if (sim.broker?.fellBack) {
    say(`MQTT port ${DEFAULT_MQTT_PORT} is taken (a local Mosquitto?); the embedded broker uses ${sim.broker.port} instead`);
  }
  if (sim.http?.api.fellBack) say(`HTTP port ${DEFAULT_HTTP_PORT} is taken; the API uses ${sim.http.api.port} instead`);
  // Where the control plane is and who may use it: said on stderr, and in the dashboard's info panel.
  const access = controlAccess(host, http.controlToken, argv['control-token'] !== undefined, sim.broker !== undefined && !sim.broker.auth);
  notice(io, access);
  const summary = fleetSummary(sim.fleet);
  const listeners = sim.broker ? brokerListeners(sim.broker) : { text: '', json: {} };
  const ready = (): void =>
    printReady(
      io,
      argv.json,
      `station-sim up: API ${sim.apiUrl} · control ${sim.controlUrl} · MQTT ${sim.mqttUrl}${listeners.text} · ${summary.text} · seed ${sim.seed} · Ctrl-C to stop`,
      { apiUrl: sim.apiUrl, controlUrl: sim.controlUrl, mqttUrl: sim.mqttUrl, ...listeners.json, stations: summary.total, online: summary.online, seed: sim.seed },
    );
  if (withDashboard && sim.apiUrl) {
    // Ink and React are loaded only to be shown: most runs of `up` (CI, tests, scripts) have no dashboard.
    const { runDashboard, runDashboardUntilDone, unlockAs } = await import('../dashboard/handler.js');
    ready();
    const apiUrl = sim.apiUrl;
    // Every fixture account, with the stations it may reach: `a` switches, and `u` on a station
    // the chosen one cannot reach goes as one that can.
    const accounts = sim.fixture.accounts.map((account) => ({ email: account.email, unlock: unlockAs(apiUrl, account.email, account.password), stations: account.stations }));
    const addresses = dashboardAddresses(sim, apiUrl);
    // The dashboard owns the terminal until the user quits or a signal comes; then everything stops.
    // Ages and countdowns are drawn on the simulator's clock: it runs scaled or manual with --time-scale / --clock.
    const dashboard = runDashboard({
      url: apiUrl,
      accounts,
      addresses,
      notices,
      fixtureVoltages: new Map(sim.fixture.stations.map((station) => [station.token, station.batteryVoltage])),
      controlToken: http.controlToken,
      simulatedClock: sim.clock,
    });
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
  // Signals are ours before the ready line goes out: a supervisor may send SIGTERM the moment it reads it.
  const stopped = runUntilSignal(io, async () => {
    for (const stop of unwatch) stop();
    await stopJudged(io, sim, judge);
  });
  ready();
  await stopped;
}

/**
 * The `--mqtt-port` given, checked, and the embedded broker's security options; each refused with
 * `--broker`. These options shape the embedded broker, which --broker replaces: silently ignoring
 * them would leave someone waiting on a port nothing listens on.
 */
function embeddedBrokerFlags(argv: UpFlags): { mqttPort: number | undefined; brokerSecurity: ReturnType<typeof brokerSecurityOptions> } {
  const mqttPort = checked('mqtt-port', 'mqttPort', argv['mqtt-port']);
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
  return { mqttPort, brokerSecurity };
}

/** Whether `--dashboard` (on, off, auto) shows the dashboard here; `on` where it cannot is an error. */
function dashboardWanted(argv: UpFlags): boolean {
  const dashboard = argv.dashboard ?? 'off';
  // Ink draws only its last frame when CI is set, so "auto" leaves the dashboard out there.
  const withDashboard = dashboard === 'on' || (dashboard === 'auto' && process.stdout.isTTY === true && !argv.json && !process.env.CI);
  if (dashboard === 'on' && argv.json) throw new UsageError('--dashboard on and --json do not go together: the dashboard takes the terminal that the JSON line goes to');
  if (dashboard === 'on' && !process.stdout.isTTY) throw new SimError('BAD_REQUEST', NOT_A_TTY_MESSAGE);
  return withDashboard;
}

/** What the dashboard's info panel shows of where things are. */
function dashboardAddresses(sim: StartedSimulator, apiUrl: string): DashboardAddresses {
  return {
    api: apiUrl,
    ...(sim.controlUrl ? { control: sim.controlUrl } : {}),
    broker: {
      url: sim.mqttUrl,
      embedded: sim.broker !== undefined,
      ...(sim.broker ? { auth: sim.broker.auth, listeners: [...(sim.broker.tlsUrl ? [`TLS ${sim.broker.tlsUrl}`] : []), ...(sim.broker.wsUrl ? [`WebSocket ${sim.broker.wsUrl}`] : [])] } : {}),
    },
  };
}
