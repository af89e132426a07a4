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
  /** What to change in the code under test so the rule holds, in one sentence. */
  fix: string;
  /** The document and section the rule comes from, as a path with an anchor. */
  source: string;
}

const MQTT_CONTRACT = 'docs/design.md#default-mqtt-topic-contract-mqtt-311-json-payloads-qos-1';
const STATES = 'docs/service-interface.md#3-states-and-transitions';
const AUTHENTICATION = 'docs/service-interface.md#5-authentication';
const TRUST_MODEL = 'docs/design.md#trust-model-who-may-do-what';

const CATALOGUE: Record<JudgeRuleId, Omit<JudgeRule, 'id' | 'party'>> = {
  'service.command-to-offline-station': {
    fix: "Read the station's retained status before publishing, and publish only while it says `online`; refuse or queue the unlock in your service instead of the broker.",
    description: 'A command was sent while the station was offline: a client must check that the station is online before it sends commands.',
    source: STATES,
  },
  'service.bad-payload': {
    fix: 'Publish exactly `{"commandId":"<uuid>","sentAt":"<ISO 8601 UTC>"}`: both fields, no others, sentAt from `Date.prototype.toISOString()`.',
    description: 'A command payload is not the contract\'s `{"commandId","sentAt"}` (not JSON, wrong fields, sentAt not ISO 8601 UTC, too large).',
    source: MQTT_CONTRACT,
  },
  'service.command-id-reused': {
    fix: "Make a fresh command id (a UUID) for every command; repeat an id only when resending that very command.",
    description: 'A command id was used again for a different command (another lock or another sentAt); only a redelivery may repeat an id.',
    source: MQTT_CONTRACT,
  },
  'service.qos0-command': {
    fix: "Publish commands with `qos: 1`.",
    description: 'A command arrived with QoS 0: the contract is QoS 1, and a QoS 0 command is lost with the connection.',
    source: MQTT_CONTRACT,
  },
  'service.retained-command': {
    fix: "Publish commands with `retain: false`; clear a retained one by publishing an empty retained payload to its topic.",
    description: 'A command was published retained: the broker sends it again on every subscription, which would open the lock on every reconnect.',
    source: MQTT_CONTRACT,
  },
  'service.stale-sent-at': {
    fix: "Stamp sentAt when you publish, from a clock in sync with the stations (NTP), and publish within the station's command TTL; with `--time-scale`, stamp it from the simulator's clock (docs/judge.md).",
    description: "A command's sentAt is older than the station's command TTL when it arrives: the station refuses it as expired.",
    source: MQTT_CONTRACT,
  },
  'service.future-sent-at': {
    fix: "Stamp sentAt from a synchronised clock (NTP) at the moment you publish, never a planned time.",
    description: "A command's sentAt lies in the future of the station's clock, beyond the skew allowed.",
    source: MQTT_CONTRACT,
  },
  'service.unknown-lock': {
    fix: "Send commands only for the locks the station reports (its `locks/+/state` topics, or the station read of `/v1`).",
    description: 'A command names a lock the station does not have.',
    source: MQTT_CONTRACT,
  },
  'service.command-rate': {
    fix: "Send commands to a station no faster than the rate; debounce user taps and queue the rest.",
    description: 'Commands to one station came faster than the configured rate.',
    source: MQTT_CONTRACT,
  },
  'service.unlock-storm': {
    fix: 'Retry a command with the same command id (it is executed once), wait for its ack before retrying, and back off between retries.',
    description: 'More new commands (fresh ids) to one lock within a short window than a retry should send: a retry storm opens the lock again and again.',
    source: MQTT_CONTRACT,
  },
  'service.command-to-unknown-station': {
    fix: 'Publish commands only to stations that exist: take the token from the station list (`GET /v1/stations`) or the retained statuses, never from user input unchecked.',
    description: 'A command was published to a station that does not exist: the broker delivers it to nobody, and the caller waits for an ack that never comes. Judged on the embedded broker only.',
    source: MQTT_CONTRACT,
  },
  'service.spoofed-station-message': {
    fix: "Publish only commands; a station's `status`, lock `state` and acks are the station's own, and a broker's ACL should refuse anyone else (docs/mqtt-security.md).",
    description: "A client that is not the station published the station's status, a lock state or an ack: everyone who reads it is misled. Judged on the embedded broker only.",
    source: TRUST_MODEL,
  },
  'client.token-after-401': {
    fix: "On a 401, refresh the access token (POST /v1/auth/refresh) and retry once with the new one; if the refresh is refused, log in again.",
    description: 'An access token was sent again after the API answered it 401: the client must refresh, then log in if the refresh is refused too (5.5).',
    source: AUTHENTICATION,
  },
  'client.login-instead-of-refresh': {
    fix: "Keep the refresh token from the login and call POST /v1/auth/refresh when the access token expires, instead of logging in again.",
    description: 'One account logged in more often than the configured number per window: a client keeps its refresh token and refreshes instead of logging in again (5.2, 5.5).',
    source: AUTHENTICATION,
  },
  'client.refresh-token-reused': {
    fix: "Store the refresh token each refresh returns and send only that one; share one refresh between concurrent callers.",
    description: 'A refresh token was used again after it was used up (rotated by a refresh, or revoked): possible theft, so its whole token family was revoked (5.5, 5.6).',
    source: AUTHENTICATION,
  },
  'client.token-in-query': {
    fix: "Send tokens in the `Authorization: Bearer` header and passwords in the JSON body, never in a URL.",
    description: 'A token was sent in the query string of a URL, where proxies, logs and browser histories keep it: tokens go in the Authorization header only (5.3, 5.9).',
    source: AUTHENTICATION,
  },
  'client.unlock-offline-station': {
    fix: "Read the station (GET /v1/stations/{token}) and unlock only when its status is `online`; otherwise tell the user it is offline.",
    description: 'An unlock was sent for a station whose status was `offline` when the client last read it: a client must check that the station is online before it sends commands.',
    source: STATES,
  },
  'client.login-burst': {
    fix: "Log in once per user and session, keep and refresh its tokens, and back off (exponentially) after a refused login.",
    description: 'One client address made more login attempts, whatever their outcome, than the configured number per window.',
    source: AUTHENTICATION,
  },
  'client.unlock-burst': {
    fix: 'Send one unlock per user action and wait for its answer; disable the button until it comes, and debounce taps.',
    description: "One client address sent more unlocks of one station than the configured number per window: the gateway publishes each as a command, so the client floods the station.",
    source: STATES,
  },
};

/**
 * The rules only the embedded broker can judge: it sees who published a message (docs/judge.md,
 * "What the broker sees"). With an external broker they are not judged.
 */
export const EMBEDDED_BROKER_RULES: readonly JudgeRuleId[] = ['service.command-to-unknown-station', 'service.spoofed-station-message'];

/** Every rule, in the order of the ids. */
export const JUDGE_RULES: readonly JudgeRule[] = JUDGE_RULE_IDS.map((id) => ({ id, party: partyOf(id), ...CATALOGUE[id] }));

/** Who a rule judges, from its id's prefix. */
export function partyOf(id: JudgeRuleId): JudgeParty {
  return id.startsWith('client.') ? 'client' : 'service';
}
