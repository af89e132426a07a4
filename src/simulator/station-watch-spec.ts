/**
 * What the embedded broker's station watch is told, once (src/broker/station-watch.ts; docs/judge.md,
 * "What the broker sees"): every station of the fixture with its topic templates, which of them this
 * process's fleet runs, and the template the stations' client ids are made from.
 */
import type { StationWatchSpec } from '../broker/station-watch.js';
import { groupTopics } from '../contract/topics.js';
import type { Fixture, StationConfig } from '../fixture/fixture-schema.js';
import { identityTemplates } from '../fixture/mqtt-identities.js';
import { DEFAULT_IDENTITIES } from '../fixture/mqtt-schema.js';

export function stationWatchSpec(fixture: Pick<Fixture, 'stations' | 'mqtt'>, fleetStations: readonly Pick<StationConfig, 'token'>[]): StationWatchSpec {
  const { distinct, byToken } = groupTopics(fixture.stations);
  const indexOf = new Map(distinct.map((topics, index) => [topics, index]));
  const fleet = new Set(fleetStations.map((station) => station.token));
  return {
    templates: distinct.map((topics) => topics.templates),
    stations: fixture.stations.map((station) => ({ token: station.token, templates: indexOf.get(byToken.get(station.token)!)!, fleet: fleet.has(station.token) })),
    clientId: identityTemplates(fixture.mqtt).station.clientId ?? DEFAULT_IDENTITIES.station.clientId!,
  };
}
