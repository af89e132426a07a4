/**
 * Routes incoming MQTT topics to the fixture's stations. A fixture may give stations different
 * topic templates (DESIGN.md, "Default MQTT topic contract"), so the service subscribes once per
 * distinct template set rather than once per station: a fleet of a million stations sharing the
 * defaults costs three subscriptions.
 */
import type { StationConfig } from '../../fixture/fixture-schema.js';
import { groupTopics, type StationTopics, type TopicKind } from '../../contract/topics.js';

/** The kinds of topic the service listens to; it only ever publishes on `unlock`. */
export const INBOUND_KINDS = ['status', 'lockState', 'acks'] as const satisfies readonly TopicKind[];
export type InboundKind = (typeof INBOUND_KINDS)[number];

/** An incoming topic resolved to a station of the fixture. */
export interface RoutedTopic {
  kind: InboundKind;
  token: string;
  lockId?: string;
}

export class TopicRouter {
  readonly #byToken = new Map<string, { config: StationConfig; topics: StationTopics }>();
  readonly #distinct: StationTopics[];

  constructor(stations: readonly StationConfig[]) {
    const { distinct, byToken } = groupTopics(stations);
    this.#distinct = distinct;
    for (const config of stations) this.#byToken.set(config.token, { config, topics: byToken.get(config.token)! });
  }

  /** The fixture's record of a station, or undefined for a token the fixture does not list. */
  station(token: string): StationConfig | undefined {
    return this.#byToken.get(token)?.config;
  }

  topicsOf(token: string): StationTopics | undefined {
    return this.#byToken.get(token)?.topics;
  }

  /** Every subscription filter the service needs, without duplicates. */
  filters(): string[] {
    return this.filtersOf(INBOUND_KINDS);
  }

  /** The subscription filters of the given kinds of topic, without duplicates. */
  filtersOf(kinds: readonly TopicKind[]): string[] {
    const filters = new Set<string>();
    for (const topics of this.#distinct) {
      for (const kind of kinds) filters.add(topics.filter(kind));
    }
    return [...filters];
  }

  /** True when `topic` fits one of the inbound templates, whoever's token it names (for counting unknown stations). */
  fitsTemplate(topic: string): boolean {
    for (const topics of this.#distinct) for (const kind of INBOUND_KINDS) if (topics.match(kind, topic)) return true;
    return false;
  }

  /**
   * Every reading of `topic` that names a fixture station under that station's own templates.
   * Usually one; custom templates can make kinds overlap, and the payload then decides.
   */
  route(topic: string): RoutedTopic[] {
    const routes: RoutedTopic[] = [];
    for (const topics of this.#distinct) {
      for (const kind of INBOUND_KINDS) {
        const address = topics.match(kind, topic);
        // A token that fits another template set's pattern is not this station's topic.
        if (!address || this.#byToken.get(address.token)?.topics !== topics) continue;
        routes.push(address.lockId === undefined ? { kind, token: address.token } : { kind, token: address.token, lockId: address.lockId });
      }
    }
    return routes;
  }
}
