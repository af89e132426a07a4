/**
 * The notices a long-running command prints about its broker (docs/scale-out.md): one line when the
 * broker is lost, one when it is back with how long it was gone, one when the broker keeps
 * closing a station's session soon after accepting it (another process may run it too, or the
 * broker restarted), and one per station and cause when the broker refuses a station (bad
 * credentials, a revoked certificate, a failed TLS handshake: the others may be connected, so
 * nothing else would say it). A process that went quiet while its broker was away left people guessing
 * whether it was alive. Broker addresses come in already redacted.
 */
import type { ConnectionListener } from '../control/control-channel.js';
import type { StationLinkEvent } from '../mqtt/station-client.js';

export interface BrokerNoticesOptions {
  /** The broker as messages name it, without credentials (`redactUrl`). */
  broker: string;
  /** Prints one line (the CLI's `notice`). */
  notify: (message: string) => void;
  /** What keeps trying meanwhile, to end the loss notice, e.g. "the stations keep reconnecting". */
  meanwhile: string;
  /** Real time in milliseconds. @default Date.now */
  now?: () => number;
}

/** Says a loss once per outage, and the return only after a loss was said. */
export class BrokerNotices {
  readonly #options: BrokerNoticesOptions;
  /** When the outage that was announced began; undefined while the broker is there. */
  #lostSince: number | undefined;

  constructor(options: BrokerNoticesOptions) {
    this.#options = options;
  }

  now(): number {
    return (this.#options.now ?? Date.now)();
  }

  /** The broker is gone (since `since`, when the loss was noticed earlier than now). */
  lost(reason?: string, since: number = this.now()): void {
    if (this.#lostSince !== undefined) return;
    this.#lostSince = since;
    const why = reason === undefined ? '' : ` (${reason})`;
    this.#options.notify(`lost the MQTT broker at ${this.#options.broker}${why}; ${this.#options.meanwhile}`);
  }

  /** A connection was accepted again. */
  back(): void {
    if (this.#lostSince === undefined) return;
    const gone = this.now() - this.#lostSince;
    this.#lostSince = undefined;
    this.#options.notify(`the MQTT broker at ${this.#options.broker} is back after ${formatDuration(gone)}`);
  }
}

/** `8.2 s`, `3 min 12 s`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

/** Something whose connection changes can be watched: the control plane's channel. */
export interface WatchedConnection {
  onConnectionChange(listener: ConnectionListener): () => void;
}

/**
 * Notices from one session (the control plane's, in `api` and in `up --broker`): it stands for the
 * whole process, whose other sessions (the API's gateway, the fleet) reach the same broker.
 * Returns a function that stops watching.
 */
export function watchConnection(connection: WatchedConnection, notices: BrokerNotices): () => void {
  return connection.onConnectionChange((up) => (up ? notices.back() : notices.lost()));
}

/** What the fleet watch needs of a station (`StationClient`). */
export interface WatchedStation {
  readonly sessionUp: boolean;
  onLinkEvent(listener: (event: StationLinkEvent) => void): () => void;
}

/**
 * Notices from the stations of a `stations` process, which has one session per station and no
 * other. The broker counts as lost when a reconnect fails while no station has a session: a
 * session the broker closed and took back at once (a twin in another process taking it over) is
 * not an outage. It is back when any station is accepted again. A takeover is said once per
 * process, naming the first station found, as a possibility: quick broker restarts look the same. Without `notices` (another session says the loss
 * already), only the takeover. Returns a function that stops watching.
 */
export function watchFleet(stations: Iterable<WatchedStation>, notices: BrokerNotices | undefined, notify: (message: string) => void): () => void {
  let up = 0;
  let downSince: number | undefined;
  let takeoverSaid = false;
  /** Station and cause of each refusal said, so each is said once. */
  const refusalsSaid = new Set<string>();
  const stops: (() => void)[] = [];
  const list = [...stations];
  for (const station of list) if (station.sessionUp) up += 1;
  for (const station of list) {
    stops.push(
      station.onLinkEvent((event) => {
        switch (event.kind) {
          case 'up':
            up += 1;
            downSince = undefined;
            notices?.back();
            return;
          case 'down':
            up -= 1;
            if (!event.deliberate) downSince ??= notices?.now();
            return;
          case 'retryFailed':
            if (up <= 0) notices?.lost(event.reason, downSince);
            return;
          case 'refused': {
            const key = `${event.token}\u0000${event.cause}`;
            if (refusalsSaid.has(key)) return;
            refusalsSaid.add(key);
            notify(`the broker refused station ${event.token} (client id ${event.clientId}): ${event.cause}; it keeps retrying, backing off`);
            return;
          }
          case 'takenOver':
            if (takeoverSaid) return;
            takeoverSaid = true;
            // The fact, and both causes: broker restarts in quick succession close sessions soon
            // after accepting them too, and from one station's side they look the same.
            notify(
              `the broker closed station ${event.token}'s session (client id ${event.clientId}) soon after accepting it, ${event.closes} times in a row: ` +
                'another process may run it too (each station must run in exactly one process: do --shard values overlap?), or the broker restarted; ' +
                'this one keeps retrying, backing off',
            );
            return;
        }
      }),
    );
  }
  return () => {
    for (const stop of stops) stop();
  };
}

/** What the ready line says of the embedded broker's other listeners, e.g. ` · MQTT TLS mqtts://… · MQTT WebSocket wss://…`. */
export function brokerListeners(broker: { tlsUrl?: string; wsUrl?: string; auth: boolean }): { text: string; json: { tlsUrl?: string; wsUrl?: string; brokerAuth?: true } } {
  let text = '';
  if (broker.tlsUrl) text += ` · MQTT TLS ${broker.tlsUrl}`;
  if (broker.wsUrl) text += ` · MQTT WebSocket ${broker.wsUrl}`;
  if (broker.auth) text += ' (authentication required)';
  return { text, json: { ...(broker.tlsUrl ? { tlsUrl: broker.tlsUrl } : {}), ...(broker.wsUrl ? { wsUrl: broker.wsUrl } : {}), ...(broker.auth ? { brokerAuth: true as const } : {}) } };
}
