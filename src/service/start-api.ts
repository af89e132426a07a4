/**
 * Starts the `/v1` API for real: connects the MQTT gateway, builds the app and listens. `stop()`
 * undoes all of it and leaves no handle open (STYLE.md: `start()` returns something you can `stop()`).
 */
import { checkListenPort, isListenError, listenFailure } from '../shared/listen.js';
import { buildApi, type ApiInstance, type BuildApiOptions } from './build-api.js';
import { startMqttGateway, type MqttGatewayOptions, type StartedMqttGateway } from './station-gateway.js';

export interface StartApiOptions extends Omit<BuildApiOptions, 'gateway'> {
  /** Broker the gateway connects to, `mqtt://[user:pass@]host:port`. */
  mqttUrl: string;
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** @default "127.0.0.1" */
  host?: string;
  /** @default fixture.api.commandTimeoutMs */
  commandTimeoutMs?: number;
  /** Gateway settings beyond the broker address and command timeout. */
  gateway?: Omit<MqttGatewayOptions, 'mqttUrl' | 'fixture' | 'commandTimeoutMs'>;
  /** Adds routes to the app before it listens (the simulator adds the `/sim/v1` control plane). */
  beforeListen?: (app: ApiInstance, gateway: StartedMqttGateway) => Promise<void>;
  /** When the port is taken, take a free one instead of failing (the CLI's default port). @default false */
  fallbackToFreePort?: boolean;
}

export interface StartedApi {
  /** Base address of the API, e.g. `http://127.0.0.1:8080` (paths start with `/v1/`). */
  readonly url: string;
  readonly port: number;
  /** True when the requested port was taken and a free one was chosen instead. */
  readonly fellBack: boolean;
  readonly gateway: StartedMqttGateway;
  readonly app: ApiInstance;
  stop(): Promise<void>;
}

export async function startApi(options: StartApiOptions): Promise<StartedApi> {
  const { mqttUrl, port: requestedPort, host = '127.0.0.1', commandTimeoutMs, gateway: gatewayOptions, beforeListen, fallbackToFreePort, ...buildOptions } = options;
  if (requestedPort !== undefined) checkListenPort('HTTP', requestedPort);
  // The app is built first so the gateway can log through the app's logger. Nothing calls the
  // gateway before the server listens, which happens only once the gateway is up.
  let gateway: StartedMqttGateway | undefined;
  const app = await buildApi({
    ...buildOptions,
    gateway: {
      getStation: (token) => gateway!.getStation(token),
      unlock: (token, lockId) => gateway!.unlock(token, lockId),
    },
  });
  try {
    gateway = await startMqttGateway({
      logger: app.log.child({ component: 'mqtt-gateway' }),
      ...gatewayOptions,
      mqttUrl,
      fixture: options.fixture,
      ...(commandTimeoutMs === undefined ? {} : { commandTimeoutMs }),
    });
    await beforeListen?.(app, gateway);
    await listenWithFallback(app, requestedPort ?? 0, host, fallbackToFreePort ?? false);
  } catch (error) {
    await app.close();
    await gateway?.stop();
    // A taken port, a port no server can have and a host that cannot be listened on, each named
    // as the broker's listen() names them.
    throw isListenError(error) ? listenFailure(error, { port: requestedPort ?? 0, host, label: 'HTTP' }) : error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (requestedPort ?? 0);
  const fellBack = requestedPort !== undefined && requestedPort !== 0 && port !== requestedPort;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const started = gateway;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    fellBack,
    gateway: started,
    app,
    stop: async () => {
      // Closing the server waits for requests in flight; stopping the gateway at the same time
      // ends any unlock still waiting for its ack, so stop() does not wait out a command timeout.
      const closing = app.close();
      // A keep-alive connection whose request was still running when the server began to close
      // becomes idle only afterwards, and Node would wait out its keep-alive timeout (72 s) for it:
      // such connections are closed as soon as they fall idle.
      const sweeper = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
      try {
        await started.stop();
        await closing;
      } finally {
        clearInterval(sweeper);
      }
    },
  };
}

/** How often `stop()` closes connections that fell idle while the server was closing. */
const IDLE_SWEEP_MS = 25;

async function listenWithFallback(app: ApiInstance, port: number, host: string, fallback: boolean): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (error) {
    if (!fallback || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    await app.listen({ port: 0, host });
  }
}
