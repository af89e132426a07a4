/**
 * The judge's rules (docs/judge.md): each has a stable id (declared in src/fixture/judge-schema.ts,
 * so a fixture can name it), one line that says what it catches, and the section of the interface
 * or of the MQTT contract it comes from. The catalogue is typed by the ids, so a rule added there
 * and not here fails `tsc`.
 */
import { JUDGE_RULE_IDS, type JudgeRuleId } from '../fixture/judge-schema.js';

/** Who a rule judges: `service` rules the backend that publishes commands, `client` rules the code that calls `/v1`. */
export type JudgeParty = 'service' | 'client';

export interface JudgeRule {
  id: JudgeRuleId;
  party: JudgeParty;
  description: string;
  /** The document and section the rule comes from, as a path with an anchor. */
  source: string;
}

const MQTT_CONTRACT = 'docs/design.md#default-mqtt-topic-contract-mqtt-311-json-payloads-qos-1';
const STATES = 'docs/service-interface.md#3-states-and-transitions';
const AUTHENTICATION = 'docs/service-interface.md#5-authentication';

const CATALOGUE: Record<JudgeRuleId, Omit<JudgeRule, 'id' | 'party'>> = {
  'service.command-to-offline-station': {
    description: 'A command was sent while the station was offline: a client must check that the station is online before it sends commands.',
    source: STATES,
  },
  'service.bad-payload': {
    description: 'A command payload is not the contract\'s `{"commandId","sentAt"}` (not JSON, wrong fields, sentAt not ISO 8601 UTC, too large).',
    source: MQTT_CONTRACT,
  },
  'service.command-id-reused': {
    description: 'A command id was used again for a different command (another lock or another sentAt); only a redelivery may repeat an id.',
    source: MQTT_CONTRACT,
  },
  'service.qos0-command': {
    description: 'A command arrived with QoS 0: the contract is QoS 1, and a QoS 0 command is lost with the connection.',
    source: MQTT_CONTRACT,
  },
  'service.retained-command': {
    description: 'A command was published retained: the broker sends it again on every subscription, which would open the lock on every reconnect.',
    source: MQTT_CONTRACT,
  },
  'service.stale-sent-at': {
    description: "A command's sentAt is older than the station's command TTL when it arrives: the station refuses it as expired.",
    source: MQTT_CONTRACT,
  },
  'service.future-sent-at': {
    description: "A command's sentAt lies in the future of the station's clock, beyond the skew allowed.",
    source: MQTT_CONTRACT,
  },
  'service.unknown-lock': {
    description: 'A command names a lock the station does not have.',
    source: MQTT_CONTRACT,
  },
  'service.command-rate': {
    description: 'Commands to one station came faster than the configured rate.',
    source: MQTT_CONTRACT,
  },
  'client.token-after-401': {
    description: 'An access token was sent again after the API answered it 401: the client must refresh, then log in if the refresh is refused too (5.5).',
    source: AUTHENTICATION,
  },
  'client.login-instead-of-refresh': {
    description: 'One account logged in more often than the configured number per window: a client keeps its refresh token and refreshes instead of logging in again (5.2, 5.5).',
    source: AUTHENTICATION,
  },
  'client.refresh-token-reused': {
    description: 'A refresh token was used again after it was used up (rotated by a refresh, or revoked): possible theft, so its whole token family was revoked (5.5, 5.6).',
    source: AUTHENTICATION,
  },
  'client.token-in-query': {
    description: 'A token was sent in the query string of a URL, where proxies, logs and browser histories keep it: tokens go in the Authorization header only (5.3, 5.9).',
    source: AUTHENTICATION,
  },
  'client.unlock-offline-station': {
    description: 'An unlock was sent for a station whose status was `offline` when the client last read it: a client must check that the station is online before it sends commands.',
    source: STATES,
  },
  'client.login-burst': {
    description: 'One client address made more login attempts, whatever their outcome, than the configured number per window.',
    source: AUTHENTICATION,
  },
};

/** Every rule, in the order of the ids. */
export const JUDGE_RULES: readonly JudgeRule[] = JUDGE_RULE_IDS.map((id) => ({ id, party: partyOf(id), ...CATALOGUE[id] }));

/** Who a rule judges, from its id's prefix. */
export function partyOf(id: JudgeRuleId): JudgeParty {
  return id.startsWith('client.') ? 'client' : 'service';
}
