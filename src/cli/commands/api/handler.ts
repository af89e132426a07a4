/** What `api` does: the /v1 API and the control plane against an external broker, until a stop signal. */
import { startApiProcess } from '../../../simulator/start-simulator.js';
import { printReady, notice, type CliIo } from '../../output.js';
import { runUntilSignal } from '../../run-until-signal.js';
import { BrokerNotices, watchConnection } from '../../broker-notices.js';
import { DEFAULT_HTTP_PORT } from '../../options.js';
import { brokerTlsOption, controlAccess, httpOptions } from '../../option-checks.js';
import type { ApiFlags } from './options.js';

export async function runApi(io: CliIo, argv: ApiFlags): Promise<void> {
  const http = httpOptions(argv);
  const host = argv.host;
  const api = await startApiProcess({ ...http, fixture: argv.fixture, broker: argv.broker, ...brokerTlsOption(argv), host, onNotice: (m) => notice(io, m) });
  if (api.api.fellBack) notice(io, `HTTP port ${DEFAULT_HTTP_PORT} is taken; the API uses ${api.api.port} instead`);
  notice(io, controlAccess(host, http.controlToken, argv['control-token'] !== undefined));
  const unwatch = watchConnection(api.control.channel, apiBrokerNotices(io, api.mqttUrl));
  // Signals are ours before the ready line goes out: a supervisor may send SIGTERM the moment it reads it.
  const stopped = runUntilSignal(io, async () => {
    unwatch();
    await api.stop();
  });
  printReady(io, argv.json, `station-sim api: API ${api.apiUrl} · control ${api.controlUrl} · stations on ${api.mqttUrl} · Ctrl-C to stop`, {
    apiUrl: api.apiUrl,
    controlUrl: api.controlUrl,
    mqttUrl: api.mqttUrl,
  });
  await stopped;
}

/**
 * One line when the broker is lost and one when it is back, from the control plane's session (the
 * API's gateway reaches the same broker, and loses it at the same time).
 */
export function apiBrokerNotices(io: CliIo, mqttUrl: string): BrokerNotices {
  return new BrokerNotices({
    broker: mqttUrl,
    notify: (message) => notice(io, message),
    meanwhile: 'the API shows every station offline and the control plane answers 503 until it is back',
  });
}
