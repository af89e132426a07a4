/**
 * A finding of the judge and the log that keeps them: a count per rule for the whole run, and the
 * last findings themselves (bounded, so a sloppy backend in a long run cannot fill memory). The
 * fleet keeps one (for the line the CLI prints at stop), the control plane another, fed by every
 * fleet process (for `GET /sim/v1/judge`).
 */
import { channel } from 'node:diagnostics_channel';
import { Type, type Static } from '@sinclair/typebox';
import { JUDGE_RULE_IDS, type JudgeRuleId } from '../fixture/judge-schema.js';
import { JUDGE_FINDING_CHANNEL } from '../shared/diagnostics-channels.js';

const strict = { additionalProperties: false } as const;

export const JudgeRuleIdSchema = Type.Union(
  JUDGE_RULE_IDS.map((id) => Type.Literal(id)),
  { description: 'A rule id of the judge (docs/judge.md).' },
);

export const JudgePartySchema = Type.Union([Type.Literal('service'), Type.Literal('client')], {
  description: 'Who the rule judges: `service`, the backend that publishes commands; `client`, the code that calls `/v1`.',
});

/**
 * The evidence of one broken rule: when, which station, lock and command (service rules), or which
 * request, account and client address (client rules), and what was seen. Never a token of the API,
 * a part of one or a fingerprint of one, and never a password: `token` is the station's id on the
 * contract.
 */
export const JudgeFindingFields = {
  rule: JudgeRuleIdSchema,
  /** Set on client findings; a finding without it is a service rule's (the rule id's prefix says so too). */
  party: Type.Optional(JudgePartySchema),
  token: Type.Optional(Type.String({ description: 'The station: the one that received the command, or the one a client request named.' })),
  lockId: Type.Optional(Type.String()),
  commandId: Type.Optional(Type.String()),
  account: Type.Optional(Type.String({ description: 'The account of a client request (its id, the email in lower case), when the API knew it.' })),
  requestId: Type.Optional(Type.String({ description: "The API's id of the request (`req-1c`), as its log shows it." })),
  client: Type.Optional(Type.String({ description: "The client's address, as the API saw it (the socket's peer)." })),
  route: Type.Optional(Type.String({ description: 'The method and route pattern of the request: `POST /v1/auth/refresh`.' })),
  /** What was seen, in words (a QoS, a sentAt and the station's time, a count). */
  detail: Type.String(),
};
export const JudgeFindingSchema = Type.Object(
  { time: Type.String({ description: 'When the station saw it, or when the API answered the request, simulated time.' }), ...JudgeFindingFields },
  strict,
);
export type JudgeFinding = Static<typeof JudgeFindingSchema>;

/**
 * Every finding added to any judge log of the process is published on a Node diagnostics channel
 * (`JUDGE_FINDING_CHANNEL`), whatever the rule: a test suite subscribes to assert that its run
 * broke none (docs/judge.md, "In your own test suite"). Publishing costs nothing while nobody
 * subscribes.
 */
const findingChannel = channel(JUDGE_FINDING_CHANNEL);

/** Findings kept; the oldest go first (the counts keep them all). */
export const JUDGE_LOG_CAPACITY = 1000;

export class JudgeLog {
  readonly #counts = new Map<JudgeRuleId, number>();
  readonly #findings: JudgeFinding[] = [];
  readonly #capacity: number;

  constructor(capacity = JUDGE_LOG_CAPACITY) {
    this.#capacity = capacity;
  }

  add(finding: JudgeFinding): void {
    this.#counts.set(finding.rule, (this.#counts.get(finding.rule) ?? 0) + 1);
    this.#findings.push(finding);
    if (this.#findings.length > this.#capacity) this.#findings.shift();
    if (findingChannel.hasSubscribers) findingChannel.publish(finding);
  }

  /** Findings per rule id, only the rules broken at least once, in the catalogue's order. */
  summary(): Partial<Record<JudgeRuleId, number>> {
    const summary: Partial<Record<JudgeRuleId, number>> = {};
    for (const id of JUDGE_RULE_IDS) {
      const count = this.#counts.get(id);
      if (count) summary[id] = count;
    }
    return summary;
  }

  /** The last findings kept, oldest first. */
  findings(): JudgeFinding[] {
    return [...this.#findings];
  }

  clear(): void {
    this.#counts.clear();
    this.#findings.length = 0;
  }
}

/** One line for stderr at stop: `judge: 3 findings: service.qos0-command ×2, service.retained-command ×1`, or `judge: no findings`. */
export function judgeLine(summary: Partial<Record<JudgeRuleId, number>>): string {
  const entries = Object.entries(summary) as [JudgeRuleId, number][];
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return 'judge: no findings';
  return `judge: ${total} finding${total === 1 ? '' : 's'}: ${entries.map(([id, count]) => `${id} ×${count}`).join(', ')}`;
}
