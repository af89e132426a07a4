/**
 * The judge's rules (docs/judge.md): each has a stable id (declared in src/fixture/judge-schema.ts,
 * so a fixture can name it), one line that says what it catches, and the section of the interface
 * or of the MQTT contract it comes from. The catalogue is typed by the ids, so a rule added there
 * and not here fails `tsc`.
 */
import { JUDGE_RULE_IDS, type JudgeRuleId } from '../fixture/judge-schema.js';

export interface JudgeRule {
  id: JudgeRuleId;
  /** Who the rule judges: `service` rules judge the backend that publishes commands. */
  party: 'service';
  description: string;
  /** The document and section the rule comes from, as a path with an anchor. */
  source: string;
}

const MQTT_CONTRACT = 'docs/design.md#default-mqtt-topic-contract-mqtt-311-json-payloads-qos-1';
const STATES = 'docs/service-interface.md#3-states-and-transitions';

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
};

/** Every rule, in the order of the ids. */
export const JUDGE_RULES: readonly JudgeRule[] = JUDGE_RULE_IDS.map((id) => ({ id, party: 'service', ...CATALOGUE[id] }));
