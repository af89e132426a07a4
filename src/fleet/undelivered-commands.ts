/**
 * Commands delivered to nobody (docs/judge.md, `service.command-to-offline-station`). A station
 * offline with a clean session has no subscription on the broker (MQTT 3.1.1, 3.1.2.4): a command
 * published to it meanwhile reaches no station, so no station-side judge sees it. While such a
 * station is offline, the fleet agent watches its command topics and the judge is told of what is
 * published there. It costs a SUBSCRIBE when a station goes off and an UNSUBSCRIBE when it is back,
 * and nothing per unlock; a persistent session's commands are queued by the broker and judged when
 * they reach the station.
 */
import { readUnlockCommand, type StationClient } from '../mqtt/station-client.js';
import type { StationTopics } from '../contract/topics.js';
import type { StationConfig } from '../fixture/fixture-schema.js';
import type { ReceivedCommand } from '../judge/service-judge.js';
import type { Clock } from '../shared/clock.js';
import type { StartedFleetAgent } from './fleet-agent.js';

/**
 * Stations watched at once at most: a whole fleet of 100,000 going off with its broker must not
 * make the agent subscribe 100,000 times. Past it, commands to the others go unjudged (a judge may
 * miss a misdeed, never invent one).
 */
export const MAX_WATCHED_STATIONS = 10_000;

export interface UndeliveredCommandsOptions {
  agent: StartedFleetAgent;
  stations: ReadonlyMap<string, StationClient>;
  /** The distinct topic templates of the fleet's stations (`groupTopics`), to read a topic's station and lock. */
  topics: readonly StationTopics[];
  clock: Clock;
  /** Whether station-sim's own `/v1` gateway published this command id. */
  isGatewayCommand?: (commandId: string) => boolean;
  /** Where a command published to nobody goes: the judge, and the transcript. */
  judge: (command: ReceivedCommand) => void;
}

export class UndeliveredCommands {
  readonly #options: UndeliveredCommandsOptions;
  /** token → the filter watched for it. */
  readonly #watched = new Map<string, string>();
  #stopping = false;

  constructor(options: UndeliveredCommandsOptions) {
    this.#options = options;
  }

  /** The fleet's `onOnlineChange`: one function for every station. */
  readonly onOnlineChange = (online: boolean, config: StationConfig): void => {
    if (config.behaviour.session === 'persistent') return;
    const { token } = config;
    if (online) {
      const filter = this.#watched.get(token);
      if (filter === undefined) return;
      this.#watched.delete(token);
      this.#options.agent.unwatch(filter);
      return;
    }
    if (this.#stopping || this.#watched.has(token) || this.#watched.size >= MAX_WATCHED_STATIONS) return;
    const filter = this.#options.stations.get(token)?.topics.filter('unlock', { token });
    if (filter === undefined) return;
    this.#watched.set(token, filter);
    this.#options.agent.watch(filter);
  };

  /** The agent's `onWatched`: a message published on a watched station's command topic. */
  readonly onPublished = (topic: string, payload: Buffer, qos: 0 | 1 | 2): void => {
    const address = this.#address(topic);
    if (!address) return;
    const station = this.#options.stations.get(address.token);
    // Back meanwhile: its own subscription may have had it, and its own judge says so.
    if (!station || station.sessionUp || station.connected) return;
    const config = station.config;
    const command = readUnlockCommand(payload);
    this.#options.judge({
      token: address.token,
      lockId: address.lockId,
      qos: qos === 0 ? 0 : 1,
      retain: false,
      payload,
      command,
      now: this.#options.clock.now(),
      online: false,
      onlineSince: undefined,
      locks: config.locks,
      commandTtlMs: config.behaviour.commandTtlMs,
      ...(command !== undefined && this.#options.isGatewayCommand?.(command.commandId) ? { fromGateway: true } : {}),
      undelivered: true,
    });
  };

  /** Stations going off from now on are the fleet stopping, not commands going astray. */
  stop(): void {
    this.#stopping = true;
  }

  #address(topic: string): { token: string; lockId: string } | undefined {
    for (const topics of this.#options.topics) {
      const found = topics.match('unlock', topic);
      if (found?.lockId !== undefined && this.#watched.has(found.token)) return { token: found.token, lockId: found.lockId };
    }
    return undefined;
  }
}
