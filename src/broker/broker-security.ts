/**
 * What the embedded broker enforces, from a fixture (docs/mqtt-security.md, "The embedded broker,
 * secured"; docs/design.md, "Trust model"), as plain data: it is posted to the broker's thread,
 * where a `BrokerGuard` (broker-guard.ts) is built from it.
 */
import type { Fixture } from '../fixture/fixture-schema.js';
import type { Topics } from '../contract/topics.js';
import type { MqttRole } from '../fixture/mqtt-schema.js';
import { fixtureFolder, identityTemplates, type IdentityTemplates } from '../fixture/mqtt-identities.js';

/** What the broker enforces, as plain data (it is posted to the broker's thread). */
export interface BrokerSecurity {
  /** Authenticate every network connection and hold it to its topics; off, the broker is open (loopback use). */
  auth: boolean;
  identities: Record<MqttRole, IdentityTemplates>;
  /** Where relative secret files are found (the fixture's folder). */
  baseDir: string;
  /** The distinct topic templates of the fleet, and for each station token the index of its own. */
  topicSets: Topics[];
  tokens: string[];
  topicSetOf: number[];
  /** The distinct lock id lists of the fleet, and for each station the index of its own: a station publishes state only for the locks it has. */
  lockSets: string[][];
  lockSetOf: number[];
}

/**
 * The broker's rules for `fixture`. Authentication is on when `auth` says so, else when the
 * fixture's `mqtt.broker.auth` does, else when it gives `identities` or `certs`.
 */
export function brokerSecurity(fixture: Pick<Fixture, 'source' | 'stations' | 'mqtt'>, options: { auth?: boolean } = {}): BrokerSecurity {
  const mqtt = fixture.mqtt ?? {};
  const auth = options.auth ?? mqtt.broker?.auth ?? (mqtt.identities !== undefined || mqtt.certs !== undefined);
  const identities = identityTemplates(mqtt);
  const topicSets: Topics[] = [];
  const setIndex = new Map<string, number>();
  const tokens: string[] = [];
  const topicSetOf: number[] = [];
  const lockSets: string[][] = [];
  const lockSetIndex = new Map<string, number>();
  const lockSetOf: number[] = [];
  // An open broker checks no topics: nothing to send to its thread.
  for (const station of auth ? fixture.stations : []) {
    const t = station.behaviour.topics;
    const key = JSON.stringify([t.prefix, t.status, t.lockState, t.unlock, t.acks]);
    let index = setIndex.get(key);
    if (index === undefined) {
      index = topicSets.push({ prefix: t.prefix, status: t.status, lockState: t.lockState, unlock: t.unlock, acks: t.acks }) - 1;
      setIndex.set(key, index);
    }
    tokens.push(station.token);
    topicSetOf.push(index);
    // A generated fleet's stations share one array of locks: keyed by it, most fleets have one list.
    const lockIds = station.locks.map((lock) => lock.lockId);
    const lockKey = lockIds.join('\u0000');
    let lockIndex = lockSetIndex.get(lockKey);
    if (lockIndex === undefined) {
      lockIndex = lockSets.push(lockIds) - 1;
      lockSetIndex.set(lockKey, lockIndex);
    }
    lockSetOf.push(lockIndex);
  }
  return { auth, identities, baseDir: fixtureFolder(fixture.source), topicSets, tokens, topicSetOf, lockSets, lockSetOf };
}
