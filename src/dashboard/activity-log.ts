/**
 * The dashboard's event log. Most events become one line; an unlock becomes one entry that grows as
 * its events come in (requested → acked → unlocked → locked), correlated by commandId where the
 * event has one and by token + lockId where it has not (`lock.state` carries no commandId).
 * Kept apart from React so the correlation can be tested on its own.
 *
 * A second unlock of a lock whose first is still under way does what the station does with it
 * (`station-model.ts` `#execute`): while the lock is opening it changes nothing, so its chain ends
 * as joined to the opening one; while the lock is open it restarts the relock time, so the open
 * chain ends there and the relock to come belongs to the new one.
 *
 * Steps are timed on the simulator's clock, never on arrival: a command from the `time` of its
 * `command.sent` plus the `ms` the server measured, a lock state by its `lastUpdated` (the station's
 * own time of the change). Under `--clock manual` the states of a long advance all arrive at its
 * end, and under `--time-scale` a few ms of delivery are many simulated ones.
 */
import type { SimEvent, SimStation } from '../client/sim-types.js';

type Pending = SimStation['locks'][number]['pending'];
/** A lock's phase before an accepted command and after it. */
interface PhaseChange {
  from: Pending;
  to: Pending;
}

export type LogTone = 'info' | 'ok' | 'warn' | 'error';

export interface LogLine {
  kind: 'line';
  id: number;
  /** Epoch ms. */
  at: number;
  text: string;
  tone: LogTone;
}

export type UnlockStage =
  | 'requested'
  | 'acked'
  | 'unlocked'
  | 'locked'
  | 'rejected'
  | 'timeout'
  | 'jammed'
  | 'failed'
  /** Acked while an earlier unlock of the lock was opening it: nothing more happens for this one. */
  | 'joined'
  /** The lock was open and a later unlock restarted its relock time: the relock is that one's. */
  | 'superseded'
  /** Acked, but the `ackNoOpen` fault keeps the lock shut. */
  | 'unopened'
  /** Still under way when the event stream was lost (or a new snapshot came): its events are gone. */
  | 'lost';

export interface UnlockStep {
  label: string;
  /** Epoch ms, on the simulator's clock once the stream has reported the step. */
  at: number;
  /** Since the step before. */
  deltaMs?: number;
}

/** The answer of the injected `unlock()`. */
export interface UnlockResult {
  success: boolean;
  message?: string;
  /** The account cannot reach the station: a fact of the fixture, said as such, not as a failure. */
  unreachable?: boolean;
}

export interface UnlockChain {
  kind: 'unlock';
  id: number;
  at: number;
  token: string;
  lockId: string;
  commandId?: string;
  stage: UnlockStage;
  steps: readonly UnlockStep[];
  /** Set once the dashboard's own unlock call has answered; absent for unlocks by other clients. */
  result?: UnlockResult;
  /** The account it went as, where that is not the one chosen (which cannot reach the station). */
  as?: string;
}

/**
 * An action of the dashboard's own keys (`o`, `b`, `x`, `r`, a fault): one line that takes in what
 * the stream then says of it (its `control` event, the status or lock state it causes), so an
 * action is one line, not three.
 */
export interface ActionEntry {
  kind: 'action';
  id: number;
  at: number;
  /** Absent for an action on the whole simulator (a `/v1` fault), whose `control` event names no station. */
  token?: string;
  /** `ST-1001 → offline`, `ST-1001/1 jam`. */
  label: string;
  /** What the stream reported of it that is worth a word (a reboot's `offline`, `online`). */
  steps: readonly string[];
  /** The control plane's answer, once it has come: `: ok` or `: <message>`. */
  outcome?: { ok: boolean; message?: string };
}

/**
 * What the stream will report of a dashboard action, already said by its line. `step`: worth a word
 * on the line all the same (a reboot goes offline, then online).
 */
export type ActionEcho = { type: 'status'; status: 'online' | 'offline'; step?: boolean } | { type: 'lock'; lockId: string; status: string };

/** An unlock that reached `unlocked`: how long from the request, for the latency sparkline. */
export interface UnlockLatency {
  /** Epoch ms of the unlock, simulator time. */
  at: number;
  token: string;
  lockId: string;
  ms: number;
}

export type LogEntry = LogLine | UnlockChain | ActionEntry;

export interface ActivityLogOptions {
  /** Entries kept; older ones are dropped, so memory stays bounded however long it runs. @default 200 */
  limit?: number;
  /** Time of entries that do not come from the stream. */
  now: () => number;
}

const OPEN_STAGES: ReadonlySet<UnlockStage> = new Set(['requested', 'acked', 'unlocked']);
/** A dashboard action whose `control` event and expected reports are still to come. */
interface Waiting {
  id: number;
  control: boolean;
  echoes: ActionEcho[];
}
/** Actions kept waiting per station: the oldest gives up when more are pressed. */
const MAX_WAITING_ACTIONS = 8;
/** Unlock latencies kept for the sparkline and the slowest list. */
const LATENCY_LIMIT = 512;
/** Command ids of recent chains, to know their `api.request` (which may come after the chain closed). */
const RECENT_COMMANDS_LIMIT = 512;
/** How long after the dashboard's own unlock a successful `/v1/auth/*` request is taken for its login. */
const LOGIN_QUIET_MS = 3000;

export class ActivityLog {
  readonly #limit: number;
  readonly #now: () => number;
  #entries: LogEntry[] = [];
  #nextId = 1;
  /** Chains the dashboard asked for whose `command.sent` has not come yet, oldest first, per lock. */
  readonly #awaitingSend = new Map<string, number[]>();
  /** The chain that the next `lock.state` of a lock belongs to. */
  readonly #openByLock = new Map<string, number>();
  readonly #byCommand = new Map<string, number>();
  /** Commands the `ackNoOpen` fault hit (it is reported before their ack), by commandId. */
  readonly #wontOpen = new Map<string, number>();
  /**
   * The dashboard's actions per station whose echoes on the stream are still to come, oldest
   * first: keys pressed in quick succession act before the first one's events are in.
   */
  readonly #echoes = new Map<string, Waiting[]>();
  /** Command ids of chains, oldest first: their `api.request` says nothing the chain does not. */
  readonly #recentCommands = new Set<string>();
  /** The dashboard's own unlock calls per lock whose `api.request` has not come yet. */
  readonly #ownUnlockRequests = new Map<string, number>();
  /** Until when (simulator time) a successful `/v1/auth/*` request is the dashboard's own login. */
  #loginQuietUntil = -Infinity;
  #ownUnlocksInFlight = 0;
  #latencies: UnlockLatency[] = [];

  constructor(options: ActivityLogOptions) {
    this.#limit = options.limit ?? 200;
    this.#now = options.now;
  }

  /** Oldest first. */
  get entries(): readonly LogEntry[] {
    return this.#entries;
  }

  note(text: string, tone: LogTone = 'info', at: number = this.#now()): void {
    this.#push({ kind: 'line', id: this.#nextId++, at, text, tone });
  }

  /** Unlocks that reached `unlocked`, oldest first, the last 512. */
  get latencies(): readonly UnlockLatency[] {
    return this.#latencies;
  }

  /**
   * Starts the line of a dashboard action on `token` (none: on the whole simulator); what the
   * stream says of it joins the line.
   */
  beginAction(token: string | undefined, label: string, echoes: readonly ActionEcho[] = []): number {
    const id = this.#nextId++;
    this.#push({ kind: 'action', id, at: this.#now(), ...(token === undefined ? {} : { token }), label, steps: [] });
    const queue = this.#echoes.get(echoKey(token)) ?? [];
    queue.push({ id, control: true, echoes: [...echoes] });
    // An echo that never came (a status the station already had) must not wait for ever.
    if (queue.length > MAX_WAITING_ACTIONS) queue.shift();
    this.#echoes.set(echoKey(token), queue);
    return id;
  }

  /** The control plane's answer to an action; a failed one will have no echoes. */
  finishAction(id: number, outcome: { ok: boolean; message?: string }): void {
    const index = this.#indexOf(id);
    const entry = this.#entries[index];
    if (entry?.kind !== 'action') return;
    this.#entries[index] = { ...entry, outcome };
    if (!outcome.ok) this.#settle(echoKey(entry.token), (waiting) => waiting.id !== id);
  }

  /** Keeps the actions waiting on `key` that `keep` says, and those with echoes still to come. */
  #settle(key: string, keep: (waiting: Waiting) => boolean = () => true): void {
    const rest = (this.#echoes.get(key) ?? []).filter((waiting) => keep(waiting) && (waiting.control || waiting.echoes.length > 0));
    if (rest.length > 0) this.#echoes.set(key, rest);
    else this.#echoes.delete(key);
  }

  /** Starts the entry of an unlock the dashboard is about to ask for; returns its id. */
  beginUnlock(token: string, lockId: string, as?: string): number {
    const id = this.#nextId++;
    const at = this.#now();
    this.#push({ kind: 'unlock', id, at, token, lockId, stage: 'requested', steps: [{ label: 'requested', at }], ...(as === undefined ? {} : { as }) });
    const key = lockKey(token, lockId);
    this.#awaitingSend.set(key, [...(this.#awaitingSend.get(key) ?? []), id]);
    this.#ownUnlockRequests.set(key, (this.#ownUnlockRequests.get(key) ?? 0) + 1);
    this.#ownUnlocksInFlight += 1;
    this.#loginQuietUntil = Math.max(this.#loginQuietUntil, at + LOGIN_QUIET_MS);
    return id;
  }

  /** Records the answer of the dashboard's unlock call on its entry. */
  finishUnlock(id: number, result: UnlockResult): void {
    this.#ownUnlocksInFlight = Math.max(0, this.#ownUnlocksInFlight - 1);
    this.#loginQuietUntil = Math.max(this.#loginQuietUntil, this.#now() + LOGIN_QUIET_MS);
    this.#update(id, (chain) => {
      // A failure before the station ever saw the command (offline station, API error) ends the
      // chain. Once `command.sent` has come (commandId set), the command's own outcome is still on
      // its way: a timed-out unlock answers the call and then sends `command.timeout`.
      const failedEarly = !result.success && chain.stage === 'requested' && chain.commandId === undefined;
      if (failedEarly) this.#close(chain);
      return { ...chain, result, stage: failedEarly ? 'failed' : chain.stage };
    });
  }

  /**
   * Turns one event into log entries. `before` is the station as it was before the event, so that
   * only changes are logged: heartbeats republish an unchanged status every few seconds per station.
   */
  observe(event: SimEvent, before: SimStation | undefined): void {
    const at = Date.parse(event.time);
    switch (event.type) {
      case 'snapshot':
        // A new connection (maybe to a restarted simulator): what was under way before it cannot
        // be followed any more, and its commandIds and lock owners must not catch the new events.
        this.eventsLost();
        this.note(`snapshot: ${event.stations.length} stations`, 'info', at);
        return;
      case 'station.status':
        if (before?.status === event.status) return;
        if (this.#echoed(event.token, { type: 'status', status: event.status })) return;
        this.note(`${event.token} ${event.status}`, event.status === 'online' ? 'ok' : 'error', at);
        return;
      case 'command.sent':
        this.#sent(event.token, event.lockId, event.commandId, at);
        return;
      case 'command.acked': {
        const from = before?.locks.find((lock) => lock.lockId === event.lockId)?.pending ?? null;
        this.#commandStep(event, at, { stage: 'acked', label: 'acked', ms: event.ms, phase: { from, to: event.pending } });
        return;
      }
      case 'command.rejected':
        this.#commandStep(event, at, { stage: 'rejected', label: `rejected: ${event.reason}`, ms: event.ms });
        return;
      case 'command.timeout':
        this.#commandStep(event, at, { stage: 'timeout', label: 'timed out', ms: event.ms });
        return;
      case 'lock.state': {
        // The station's time of the change; the event's own time is when it reached the server.
        const changedAt = Date.parse(event.lastUpdated);
        if (this.#lockStep(event.token, event.lockId, event.status, Number.isFinite(changedAt) ? changedAt : at)) return;
        const previous = before?.locks.find((lock) => lock.lockId === event.lockId)?.status;
        if (previous !== event.status && !this.#echoed(event.token, { type: 'lock', lockId: event.lockId, status: event.status })) {
          this.note(`${event.token}/${event.lockId} ${event.status}`, event.status === 'jammed' ? 'warn' : 'info', at);
        }
        return;
      }
      case 'fault.applied': {
        this.note(`${event.token}${event.lockId === undefined ? '' : `/${event.lockId}`} fault ${event.fault}`, 'warn', at);
        const chainId = event.commandId === undefined ? undefined : this.#byCommand.get(event.commandId);
        if (event.fault === 'ackNoOpen' && chainId !== undefined) this.#wontOpen.set(event.commandId!, chainId);
        return;
      }
      case 'control': {
        // Control events come in the order the control plane carried the actions out.
        const waiting = this.#echoes.get(echoKey(event.token))?.find((each) => each.control);
        if (waiting) {
          waiting.control = false;
          this.#settle(echoKey(event.token));
          return;
        }
        this.note(`control ${event.token ?? 'fleet'}: ${event.action}`, 'info', at);
        return;
      }
      case 'api.request':
        if (this.#ownApiRequest(event, at)) return;
        this.note(`${event.method} ${event.route} → ${event.status} (${event.ms}ms)`, event.status >= 500 ? 'error' : event.status >= 400 ? 'warn' : 'info', at);
        return;
      case 'broker.refused':
        this.note(`broker refused ${event.kind}${event.identity ? ` by ${event.identity}` : ''}${event.topic ? ` on ${event.topic}` : ''}: ${event.reason}`, 'warn', at);
        return;
      case 'judge.finding':
        // A client rule's finding may name no station: then the account, or the client's address.
        this.note(`judge ${event.rule}: ${event.token ?? event.account ?? event.client ?? '-'}${event.lockId === undefined ? '' : `/${event.lockId}`} ${event.detail}`, 'warn', at);
        return;
    }
  }

  /**
   * The stream was lost, or a new snapshot starts it over: every chain still under way ends as
   * `lost` and the correlation state is dropped, so a later unlock (perhaps of a restarted
   * simulator reusing commandIds and lock ids) starts from an idle lock.
   */
  eventsLost(): void {
    for (let index = 0; index < this.#entries.length; index++) {
      const entry = this.#entries[index]!;
      if (entry.kind !== 'unlock' || !OPEN_STAGES.has(entry.stage)) continue;
      // One the dashboard asked for whose call failed before the station saw it is already closed.
      this.#entries[index] = { ...entry, stage: 'lost' };
    }
    this.#openByLock.clear();
    this.#awaitingSend.clear();
    this.#byCommand.clear();
    this.#wontOpen.clear();
    this.#echoes.clear();
    this.#ownUnlockRequests.clear();
  }

  /** Whether a dashboard action on `token` expected this report: then its line has taken it in. */
  #echoed(token: string, echo: ActionEcho): boolean {
    const matches = (each: ActionEcho): boolean =>
      each.type === 'status' ? echo.type === 'status' && each.status === echo.status : echo.type === 'lock' && each.lockId === echo.lockId && each.status === echo.status;
    const waiting = this.#echoes.get(token)?.find((each) => each.echoes.some(matches));
    if (!waiting) return false;
    const [taken] = waiting.echoes.splice(waiting.echoes.findIndex(matches), 1);
    if (taken?.type === 'status' && taken.step) {
      const at = this.#indexOf(waiting.id);
      const entry = this.#entries[at];
      if (entry?.kind === 'action') this.#entries[at] = { ...entry, steps: [...entry.steps, taken.status] };
    }
    this.#settle(token);
    return true;
  }

  /**
   * Whether an `api.request` only repeats what an entry says: the request of an unlock chain (by
   * its commandId, or the dashboard's own unlock that failed before a command was sent), or the
   * login of the dashboard's own unlock. Failed logins stay: they are news.
   */
  #ownApiRequest(event: Extract<SimEvent, { type: 'api.request' }>, at: number): boolean {
    if (event.route.startsWith('/v1/auth/')) return event.status < 400 && (this.#ownUnlocksInFlight > 0 || at <= this.#loginQuietUntil);
    if (event.token === undefined || event.lockId === undefined || !event.route.endsWith('/unlock')) return false;
    const key = lockKey(event.token, event.lockId);
    const own = this.#ownUnlockRequests.get(key) ?? 0;
    if (own > 0) {
      if (own === 1) this.#ownUnlockRequests.delete(key);
      else this.#ownUnlockRequests.set(key, own - 1);
      return true;
    }
    return event.commandId !== undefined && this.#recentCommands.has(event.commandId);
  }

  #sent(token: string, lockId: string, commandId: string, at: number): void {
    // A redelivered command (QoS 1) is the same unlock, not a new one.
    if (this.#byCommand.has(commandId)) return;
    const key = lockKey(token, lockId);
    const waiting = this.#awaitingSend.get(key);
    const id = waiting?.shift();
    if (waiting?.length === 0) this.#awaitingSend.delete(key);
    let chainId: number;
    if (id !== undefined && this.#find(id)) {
      chainId = id;
      // From here on every step is timed on the simulator's clock, so the deltas do not mix clocks.
      this.#update(id, (chain) => ({ ...chain, at, commandId, steps: [{ label: 'requested', at }] }));
    } else {
      // An unlock asked for by another client of the /v1 API.
      chainId = this.#nextId++;
      this.#push({ kind: 'unlock', id: chainId, at, token, lockId, commandId, stage: 'requested', steps: [{ label: 'requested', at }] });
    }
    this.#byCommand.set(commandId, chainId);
    this.#recentCommands.add(commandId);
    if (this.#recentCommands.size > RECENT_COMMANDS_LIMIT) this.#recentCommands.delete(this.#recentCommands.values().next().value!);
    // Whose the lock's states are is settled by the ack (#acked); until then, an idle lock's.
    if (!this.#openByLock.has(key)) this.#openByLock.set(key, chainId);
  }

  #commandStep(
    event: { token: string; lockId: string; commandId: string },
    eventAt: number,
    { stage, label, ms, phase }: { stage: 'acked' | 'rejected' | 'timeout'; label: string; ms: number | undefined; phase?: PhaseChange },
  ): void {
    const { token, lockId, commandId } = event;
    const id = this.#byCommand.get(commandId);
    const chain = id === undefined ? undefined : this.#find(id);
    if (!chain || chain.stage !== 'requested') {
      // The stream started after the command was sent (or the entry has scrolled away).
      this.note(`${token}/${lockId} ${label}${ms === undefined ? '' : ` +${ms}ms`}`, stage === 'acked' ? 'info' : 'error', eventAt);
      return;
    }
    // `ms` is the server's own measure since it saw the command go out, on the simulator's clock.
    const sentAt = chain.steps[0]?.at;
    const at = ms !== undefined && sentAt !== undefined ? sentAt + ms : eventAt;
    const step: UnlockStep = { label, at, ...(ms === undefined ? {} : { deltaMs: ms }) };
    if (stage === 'acked') {
      this.#acked(chain, step, phase ?? { from: null, to: 'opening' });
      return;
    }
    this.#update(chain.id, (current) => {
      const next = { ...current, stage, steps: [...current.steps, step] };
      this.#close(next);
      return next;
    });
  }

  /**
   * An accepted command: what it does depends on the lock's phase before it and after it (the
   * ack's `pending`, from the station model), as the top says.
   */
  #acked(chain: UnlockChain, ack: UnlockStep, phase: PhaseChange): void {
    const key = lockKey(chain.token, chain.lockId);
    const wontOpen = chain.commandId !== undefined && this.#wontOpen.delete(chain.commandId);
    const ownerId = this.#openByLock.get(key);
    const owner = ownerId === undefined || ownerId === chain.id ? undefined : this.#find(ownerId);
    let stage: UnlockStage = 'acked';
    const steps: UnlockStep[] = [...chain.steps, ack];
    if (wontOpen || phase.to === null) {
      stage = 'unopened';
      steps.push({ label: 'stays shut (ackNoOpen)', at: ack.at });
    } else if (phase.from === 'opening') {
      stage = 'joined';
      steps.push({ label: 'joins the opening under way', at: ack.at });
    } else if (phase.from === 'open') {
      if (owner && OPEN_STAGES.has(owner.stage)) {
        this.#update(owner.id, (current) => {
          const next: UnlockChain = { ...current, stage: 'superseded', steps: [...current.steps, { label: 'held open by the next unlock', at: ack.at }] };
          this.#close(next);
          return next;
        });
      }
      stage = 'unlocked';
      steps.push({ label: 'already open', at: ack.at });
      this.#openByLock.set(key, chain.id);
    } else {
      // An idle lock: this unlock opens it.
      this.#openByLock.set(key, chain.id);
    }
    this.#update(chain.id, (current) => {
      const next = { ...current, stage, steps };
      if (!OPEN_STAGES.has(stage)) this.#close(next);
      return next;
    });
  }

  /** Advances the lock's open chain; false when the state belongs to no chain. */
  #lockStep(token: string, lockId: string, status: string, at: number): boolean {
    const id = this.#openByLock.get(lockKey(token, lockId));
    const chain = id === undefined ? undefined : this.#find(id);
    if (!chain || !OPEN_STAGES.has(chain.stage)) return false;
    const previous = chain.steps[chain.steps.length - 1];
    const deltaMs = previous ? Math.max(0, at - previous.at) : undefined;
    let stage: UnlockStage;
    if (status === 'jammed') stage = 'jammed';
    else if (status === 'unlocked' && (chain.stage === 'acked' || chain.stage === 'requested')) {
      stage = 'unlocked';
      const requestedAt = chain.steps[0]?.at;
      if (requestedAt !== undefined) {
        this.#latencies.push({ at, token, lockId, ms: Math.max(0, at - requestedAt) });
        if (this.#latencies.length >= LATENCY_LIMIT * 2) this.#latencies = this.#latencies.slice(-LATENCY_LIMIT);
      }
    }
    else if (status === 'locked' && chain.stage === 'unlocked') stage = 'locked';
    // A repeated report (the duplicateState fault) or a state the chain does not expect yet.
    else return chain.stage === 'unlocked' && status === 'unlocked';
    this.#update(chain.id, (current) => {
      const next = { ...current, stage, steps: [...current.steps, { label: status, at, ...(deltaMs === undefined ? {} : { deltaMs }) }] };
      if (!OPEN_STAGES.has(stage)) this.#close(next);
      return next;
    });
    return true;
  }

  #close(chain: UnlockChain): void {
    const key = lockKey(chain.token, chain.lockId);
    if (this.#openByLock.get(key) === chain.id) this.#openByLock.delete(key);
    if (chain.commandId !== undefined) {
      this.#byCommand.delete(chain.commandId);
      this.#wontOpen.delete(chain.commandId);
    }
    const waiting = this.#awaitingSend.get(key);
    if (waiting) {
      const rest = waiting.filter((id) => id !== chain.id);
      if (rest.length > 0) this.#awaitingSend.set(key, rest);
      else this.#awaitingSend.delete(key);
    }
  }

  #push(entry: LogEntry): void {
    this.#entries.push(entry);
    // Trim in batches: slicing on every push would copy the whole log each time.
    if (this.#entries.length >= this.#limit * 2) {
      this.#entries = this.#entries.slice(-this.#limit);
      this.#forgetDropped();
    }
  }

  /** Correlation maps must not outlive their entries (an `ackNoOpen` chain never closes). */
  #forgetDropped(): void {
    const oldest = this.#entries[0]?.id ?? this.#nextId;
    for (const [key, id] of this.#openByLock) if (id < oldest) this.#openByLock.delete(key);
    for (const [commandId, id] of this.#byCommand) if (id < oldest) this.#byCommand.delete(commandId);
    for (const [commandId, id] of this.#wontOpen) if (id < oldest) this.#wontOpen.delete(commandId);
    for (const key of [...this.#echoes.keys()]) this.#settle(key, (waiting) => waiting.id >= oldest);
    for (const [key, ids] of this.#awaitingSend) {
      const rest = ids.filter((id) => id >= oldest);
      if (rest.length > 0) this.#awaitingSend.set(key, rest);
      else this.#awaitingSend.delete(key);
    }
  }

  /** Entries are appended with increasing ids, so a binary search finds one. */
  #indexOf(id: number): number {
    let low = 0;
    let high = this.#entries.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const candidate = this.#entries[middle]!.id;
      if (candidate === id) return middle;
      if (candidate < id) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  #find(id: number): UnlockChain | undefined {
    const entry = this.#entries[this.#indexOf(id)];
    return entry?.kind === 'unlock' ? entry : undefined;
  }

  /** Replaces an entry rather than mutating it, so a rendered entry never changes under React. */
  #update(id: number, change: (chain: UnlockChain) => UnlockChain): void {
    const index = this.#indexOf(id);
    const entry = this.#entries[index];
    if (entry?.kind === 'unlock') this.#entries[index] = change(entry);
  }
}

/** The text of an entry, e.g. `ST-1001/1 unlock → acked +12ms → unlocked +503ms → locked +5004ms · ok`. */
export function describeEntry(entry: LogEntry): { text: string; tone: LogTone } {
  const { segments, tone } = entrySegments(entry);
  return { text: segments.join(' '), tone };
}

/**
 * An entry in the pieces a narrow log may wrap it at: for an unlock the head (`ST-1001/1 unlock`),
 * one piece per step (`→ acked +12ms`) and the outcome (`· ok`, `· failed: …`); a line is one piece.
 */
export function entrySegments(entry: LogEntry): { segments: string[]; tone: LogTone } {
  if (entry.kind === 'line') return { segments: [entry.text], tone: entry.tone };
  if (entry.kind === 'action') {
    const outcome = entry.outcome === undefined ? '' : entry.outcome.ok ? ': ok' : `: ${entry.outcome.message ?? 'failed'}`;
    const tone: LogTone = entry.outcome === undefined ? 'info' : entry.outcome.ok ? 'ok' : 'error';
    return { segments: [`${entry.label}${outcome}`, ...entry.steps.map((step) => `→ ${step}`)], tone };
  }
  // The first step is the request itself: it is worth a word only while nothing else has happened.
  const [, ...after] = entry.steps;
  const head = `${entry.token}/${entry.lockId} unlock${entry.as === undefined ? '' : ` as ${entry.as}`}${after.length === 0 ? ' requested' : ''}`;
  const segments = [head, ...after.map((step) => `→ ${step.label}${step.deltaMs === undefined ? '' : ` +${Math.round(step.deltaMs)}ms`}`)];
  if (entry.stage === 'lost') segments.push('· events lost');
  if (entry.result) segments.push(entry.result.success ? '· ok' : entry.result.unreachable ? `· ${entry.result.message}` : `· failed: ${entry.result.message ?? 'unlock failed'}`);
  return { segments, tone: chainTone(entry) };
}

function chainTone(chain: UnlockChain): LogTone {
  if (chain.result?.unreachable) return 'warn';
  if (chain.result && !chain.result.success) return 'error';
  switch (chain.stage) {
    case 'requested':
      return 'info';
    case 'jammed':
    case 'unopened':
    case 'lost':
      return 'warn';
    case 'rejected':
    case 'timeout':
    case 'failed':
      return 'error';
    default:
      return 'ok';
  }
}

/** Actions on the whole simulator wait for their `control` event under the empty key. */
function echoKey(token: string | undefined): string {
  return token ?? '';
}

function lockKey(token: string, lockId: string): string {
  return `${token}\u0000${lockId}`;
}
