import type { CommandModule } from 'yargs';
import { startApiProcess } from '../../simulator/start-simulator.js';
import { printReady, notice, type CliIo } from '../output.js';
import { runUntilSignal } from '../run-until-signal.js';
import { DEFAULT_HTTP_PORT, controlAccess, httpOptions, withBroker, withFixture, withHost, withHttp, withJson } from '../options.js';

export function apiCommand(io: CliIo): CommandModule {
  return {
    command: 'api',
    describe: 'Run only the /v1 API and the /sim/v1 control plane, against stations on any MQTT broker',
    builder: (yargs) => withHttp(withBroker(withHost(withJson(withFixture(yargs))), true)),
    handler: async (argv) => {
      const http = httpOptions(argv);
      const host = argv.host as string;
      const api = await startApiProcess({ ...http, fixture: argv.fixture as string | undefined, broker: argv.broker as string, host, onNotice: (m) => notice(io, m) });
      if (api.api.fellBack) notice(io, `HTTP port ${DEFAULT_HTTP_PORT} is taken; the API uses ${api.api.port} instead`);
      notice(io, controlAccess(host, http.controlToken));
      printReady(io, argv.json as boolean, `station-sim api: API ${api.apiUrl} · control ${api.controlUrl} · stations on ${api.mqttUrl} · Ctrl-C to stop`, {
        apiUrl: api.apiUrl,
        controlUrl: api.controlUrl,
        mqttUrl: api.mqttUrl,
      });
      await runUntilSignal(io, () => api.stop());
    },
  };
}
