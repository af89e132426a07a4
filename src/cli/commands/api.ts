import type { CommandModule } from 'yargs';
import { startApiProcess } from '../../simulator/start-simulator.js';
import { printReady, notice, type CliIo } from '../output.js';
import { runUntilSignal } from '../run-until-signal.js';
import { BrokerNotices, watchConnection } from '../broker-notices.js';
import { DEFAULT_HTTP_PORT, controlAccess, httpOptions, brokerTlsOption, withBroker, withFixture, withHost, withHttp, withJson } from '../options.js';

export function apiCommand(io: CliIo): CommandModule {
  return {
    command: 'api',
    describe: 'Run only the /v1 API and the /sim/v1 control plane, against stations on any MQTT broker',
    builder: (yargs) => withHttp(withBroker(withHost(withJson(withFixture(yargs))), true)),
    handler: async (argv) => {
      const http = httpOptions(argv);
      const host = argv.host as string;
      const api = await startApiProcess({ ...http, fixture: argv.fixture as string | undefined, broker: argv.broker as string, ...brokerTlsOption(argv), host, onNotice: (m) => notice(io, m) });
      if (api.api.fellBack) notice(io, `HTTP port ${DEFAULT_HTTP_PORT} is taken; the API uses ${api.api.port} instead`);
      notice(io, controlAccess(host, http.controlToken, argv['control-token'] !== undefined));
      printReady(io, argv.json as boolean, `station-sim api: API ${api.apiUrl} · control ${api.controlUrl} · stations on ${api.mqttUrl} · Ctrl-C to stop`, {
        apiUrl: api.apiUrl,
        controlUrl: api.controlUrl,
        mqttUrl: api.mqttUrl,
      });
      const unwatch = watchConnection(api.control.channel, apiBrokerNotices(io, api.mqttUrl));
      await runUntilSignal(io, async () => {
        unwatch();
        await api.stop();
      });
    },
  };
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
