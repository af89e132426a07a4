/**
 * What each action of the story does, and the line it comes to: the request, the answer, and
 * whether that is what the story expected. Lines carry simulated durations only (an unlock delay,
 * a relock time), never real ones, so a replay with the same seed gives the same lines.
 */
import { ApiError } from '../client/api-error.js';
import type { ControlClient } from '../client/control-client.js';
import type { SimStation } from '../client/sim-types.js';
import type { StationSimClient } from '../client/station-sim-client.js';
import type { Clock } from '../shared/clock.js';
import type { DemoAction, UnlockExpectation } from './demo-story.js';
import type { DemoPacer } from './demo-pacer.js';

/** What an action came to. */
export interface ActionOutcome {
  /** As the story expected. */
  ok: boolean;
  /** The whole line: the request, the answer, the state (`--no-dashboard` prints it). */
  text: string;
  /** The same, short enough for the caption's second line at 80 columns. */
  brief: string;
}

/** What the actions act through, and what they remember between them. */
export interface ActionContext {
  control: Pick<ControlClient, 'station' | 'physical' | 'setBattery' | 'setConnection' | 'setLink' | 'addFault' | 'clearFaults'>;
  /** The `/v1` client logged in as `email`. */
  api(email: string): Pick<StationSimClient, 'unlock' | 'getStation'>;
  pacer: DemoPacer;
  /** The simulator's time now (it moves only with the pacer's ticks). */
  simNow(): number;
  /** Where the `/v1` polls of `awaitStation` wait (real time: simulated time stands still meanwhile). */
  realClock: Clock;
  /** Battery voltage of each station when the story began, for `battery: "start"`. */
  startVoltages: ReadonlyMap<string, number>;
  /** When each lock was last sent an accepted unlock (simulated ms), for the delay `awaitLock` reports. */
  unlockedAt: Map<string, number>;
  /** How long `awaitStation` reads `/v1` before giving up. @default 10000 */
  stationWaitMs?: number;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const volts = (voltage: number): string => `${voltage.toFixed(2)} V`;

export async function performAction(action: DemoAction, context: ActionContext): Promise<ActionOutcome> {
  switch (action.do) {
    case 'unlock':
      return unlock(action, context);
    case 'awaitLock':
      return awaitLock(action, context);
    case 'awaitStation':
      return awaitStation(action, context);
    case 'physical': {
      const station = await context.control.physical(action.station, action.lockId, action.action);
      const status = lockOf(station, action.lockId)?.status;
      const wanted = action.action === 'jam' ? 'jammed' : action.action === 'forceOpen' ? 'unlocked' : 'locked';
      return {
        ok: status === wanted,
        text: `${action.action} ${action.station}/${action.lockId} (a physical event): the lock is ${status ?? 'gone'}`,
        brief: `${action.action}: lock ${action.lockId} is ${status ?? 'gone'}`,
      };
    }
    case 'battery': {
      const voltage = action.voltage === 'start' ? context.startVoltages.get(action.station) : action.voltage;
      if (voltage === undefined) return { ok: false, text: `no starting voltage known for ${action.station}`, brief: 'no starting voltage known' };
      const station = await context.control.setBattery(action.station, voltage);
      const text = `battery ${volts(station.batteryVoltage)} (cut-off ${volts(station.battery.cutoffV)})`;
      return { ok: Math.abs(station.batteryVoltage - voltage) < 1e-9, text: `${action.station}: ${text}`, brief: text };
    }
    case 'connection': {
      const station = await context.control.setConnection(action.station, action.online);
      const text = action.online
        ? `${action.station} reconnects and reports ${station.status}`
        : `${action.station} drops off the network without a goodbye: the broker publishes its last will`;
      const brief = action.online ? `${action.station} is ${station.status} again` : `${action.station} dropped: the broker sends its last will`;
      return { ok: station.status === (action.online ? 'online' : 'offline'), text, brief };
    }
    case 'link': {
      const station = await context.control.setLink(action.station, action.link);
      const text = `${action.station}'s link is now ${station.link ?? 'perfect'}`;
      return { ok: station.link !== undefined, text, brief: `link: ${station.link ?? 'perfect'}` };
    }
    case 'fault': {
      const fault = await context.control.addFault(action.station, action.fault);
      const text = `fault ${fault.kind} added to ${action.station}${fault.lockId ? `/${fault.lockId}` : ''}`;
      return { ok: fault.kind === action.fault.kind, text, brief: text };
    }
    case 'clearFaults': {
      const station = await context.control.clearFaults(action.station);
      return { ok: station.faults.length === 0, text: `faults of ${action.station} cleared`, brief: 'faults cleared' };
    }
  }
}

async function unlock(action: Extract<DemoAction, { do: 'unlock' }>, context: ActionContext): Promise<ActionOutcome> {
  const asked = `unlock ${action.station}/${action.lockId} as ${action.as}`;
  // Simulated time stands still while the request is answered: the command is sent, and acked, at this instant.
  const sentAt = context.simNow();
  let answer: { status: number; success?: boolean; message?: string };
  try {
    const result = await context.api(action.as).unlock(action.station, action.lockId);
    answer = { status: 200, success: result.success, ...(result.success ? {} : { message: result.message }) };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    answer = { status: error.status, message: error.message };
  }
  // A 504 is outcome unknown: the command went out and may yet be carried out, so it counts from now too.
  if ((answer.status === 200 && answer.success) || answer.status === 504) context.unlockedAt.set(lockKey(action.station, action.lockId), sentAt);
  const body = answer.status === 200 ? JSON.stringify({ success: answer.success, ...(answer.message === undefined ? {} : { message: answer.message }) }) : JSON.stringify({ message: answer.message });
  const ok = meets(answer, action.expect);
  const said = answer.status === 200 ? (answer.success ? 'success' : `"${answer.message}"`) : answer.status === 504 ? 'no ack in time, outcome unknown' : `"${answer.message}"`;
  return {
    ok,
    text: `${asked}: ${answer.status} ${body}${ok ? '' : ` (expected ${describeExpectation(action.expect)})`}`,
    brief: `${action.as.split('@')[0]} unlocks ${action.lockId}: ${answer.status} ${said}`,
  };
}

function meets(answer: { status: number; success?: boolean; message?: string }, expect: UnlockExpectation): boolean {
  if ('status' in expect) return answer.status === expect.status && (answer.message ?? '').startsWith(expect.messageStartsWith);
  if (answer.status !== 200 || answer.success !== expect.success) return false;
  return expect.success || answer.message === expect.message;
}

function describeExpectation(expect: UnlockExpectation): string {
  if ('status' in expect) return `${expect.status} "${expect.messageStartsWith}…"`;
  return `200 ${JSON.stringify(expect)}`;
}

/**
 * Ticks simulated time until the station's model has the lock in `status`, and says how long that
 * took in simulated time: since the unlock was accepted for `unlocked`, since the lock last changed
 * otherwise. Both come from the lock's `lastUpdated`, so the tick size does not show in them.
 */
async function awaitLock(action: Extract<DemoAction, { do: 'awaitLock' }>, context: ActionContext): Promise<ActionOutcome> {
  const key = lockKey(action.station, action.lockId);
  const station = await context.control.station(action.station);
  const before = lockOf(station, action.lockId);
  // On a link that is not perfect, the command's way down is part of the wait.
  const linked = station.link !== undefined && station.link !== 'perfect';
  const changedAt = before ? Date.parse(before.lastUpdated) : context.simNow();
  // An unlock counts from its command (the lock may have opened already); anything else from the
  // lock's last change, which it must move on from.
  const since = action.status === 'unlocked' ? (context.unlockedAt.get(key) ?? changedAt) : changedAt;
  for (let waited = 0; ; waited += context.pacer.tickMs) {
    const lock = lockOf(await context.control.station(action.station), action.lockId);
    if (lock?.status === action.status && Date.parse(lock.lastUpdated) > since) {
      const took = Date.parse(lock.lastUpdated) - since;
      const delay = linked ? 'the link and its unlock delay, drawn from the seed' : 'its unlock delay, drawn from the seed';
      const why = action.status === 'unlocked' ? `after the command: ${delay}` : action.status === 'locked' ? 'after it opened: its relock time' : 'later';
      const short = action.status === 'unlocked' ? ' (unlock delay, from the seed)' : action.status === 'locked' ? ' (relock time)' : '';
      return { ok: true, text: `${key} is ${action.status} ${seconds(took)} ${why}`, brief: `lock ${action.lockId} ${action.status} after ${seconds(took)}${short}` };
    }
    if (waited >= action.withinMs) {
      const text = `${key} did not become ${action.status} within ${seconds(action.withinMs)} of simulated time (it is ${lock?.status ?? 'gone'})`;
      return { ok: false, text, brief: text };
    }
    await context.pacer.tick();
  }
}

/** Reads the station through `/v1` until it shows `status`: what a client of the API sees. */
async function awaitStation(action: Extract<DemoAction, { do: 'awaitStation' }>, context: ActionContext): Promise<ActionOutcome> {
  const api = context.api(action.as);
  const limit = context.stationWaitMs ?? 10_000;
  const started = context.realClock.now();
  for (;;) {
    const station = await api.getStation(action.station);
    if (station.status === action.status) {
      // The will is fixed when the station connects (MQTT 3.1.1, section 3.1.2.5): it carries the
      // battery of that moment, not of the moment it dropped.
      const why = action.status === 'offline' ? ' (its last will, written when it connected)' : '';
      return {
        ok: true,
        text: `GET /v1/stations/${action.station} as ${action.as}: ${station.status}${why}, battery ${volts(station.batteryVoltage)}`,
        brief: `/v1 shows ${action.station} ${station.status}${action.status === 'offline' ? ': its last will' : ''}`,
      };
    }
    if (context.realClock.now() - started >= limit) {
      const text = `GET /v1/stations/${action.station} still shows ${station.status} after ${seconds(limit)}, not ${action.status}`;
      return { ok: false, text, brief: text };
    }
    await context.pacer.gate();
    await new Promise<void>((resolve) => context.realClock.setTimeout(resolve, 50));
  }
}

function lockOf(station: SimStation, lockId: string) {
  return station.locks.find((lock) => lock.lockId === lockId);
}

function lockKey(station: string, lockId: string): string {
  return `${station}/${lockId}`;
}
