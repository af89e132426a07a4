/**
 * The narrated demo's story, as data: each step is a caption and the actions that show it, made
 * through the same clients a user's code would use (`/v1` as a fixture account, `/sim/v1` for what
 * only the simulator can do: jam a lock, drain a battery, pull a station off the network, add a
 * fault). `demo-runner.ts` plays it; `checkStory` says, before anything starts, what a fixture lacks
 * for it.
 *
 * Every wait of the story is on the simulator's clock (the demo runs it manual and moves it itself),
 * so a story played twice with one seed gives the same lines: see docs/demo.md, "Same seed, same
 * story".
 */
import type { FaultSpec, LockStatus, PhysicalAction, StationStatus } from '../client/sim-types.js';
import type { LinkSpec } from '../fixture/link-schema.js';

/** What an unlock is expected to answer (docs/api.md, sections 4 and 7). */
export type UnlockExpectation =
  /** 200 `{"success":true}`: the station accepted the command. */
  | { success: true }
  /** 200 `{"success":false,"message"}`: a definite refusal. */
  | { success: false; message: string }
  /** An error status (504 when the station never acknowledged), its message beginning with `messageStartsWith`. */
  | { status: number; messageStartsWith: string };

/** One thing a step does, and what it checks. */
export type DemoAction =
  /** `POST /v1/stations/{station}/locks/{lockId}/unlock` as the account `as`. */
  | { do: 'unlock'; as: string; station: string; lockId: string; expect: UnlockExpectation }
  /**
   * Moves simulated time until the station's model has the lock in `status` (at most `withinMs`),
   * then says how long it took: an unlock delay or a relock time, drawn from the seeded source.
   */
  | { do: 'awaitLock'; station: string; lockId: string; status: LockStatus; withinMs: number }
  /** Reads `GET /v1/stations/{station}` as `as` until it shows `status` (simulated time stands still meanwhile). */
  | { do: 'awaitStation'; as: string; station: string; status: StationStatus }
  /** Something physical happens to a lock (`/sim/v1/…/physical`). */
  | { do: 'physical'; station: string; lockId: string; action: PhysicalAction }
  /** Sets the battery; `"start"` puts back the voltage the station had when the story began. */
  | { do: 'battery'; station: string; voltage: number | 'start' }
  /** Off the network (a real drop: the broker publishes the station's last will) or back on. */
  | { do: 'connection'; station: string; online: boolean }
  /** The station's link to the broker from now on (docs/links.md); the fixture must give the station one. */
  | { do: 'link'; station: string; link: LinkSpec }
  | { do: 'fault'; station: string; fault: FaultSpec }
  | { do: 'clearFaults'; station: string };

export interface DemoStep {
  /**
   * The caption: one line, short enough to read whole at 80 columns after the step counter
   * (`MAX_CAPTION_LENGTH`).
   */
  caption: string;
  actions: DemoAction[];
  /** Simulated time the caption stays up after the actions, for the audience to read. */
  holdMs: number;
}

export interface DemoStory {
  steps: DemoStep[];
  /**
   * How long the API waits for a station's ack before answering 504: shorter than the 5 s default,
   * so the step that times out does not keep the audience waiting. Real time: the API's command
   * timeout does not follow the simulator's clock.
   */
  commandTimeoutMs: number;
}

/** Longest caption: 80 columns less the caption's ` PLAYING 10/10  ` prefix. */
export const MAX_CAPTION_LENGTH = 62;

const STATION = 'ST-1001';
const AS = 'alice@example.com';

/**
 * The story on the shipped demo fixture (fixtures/demo.json): station ST-1001 and the account
 * alice@example.com, which can reach it. Every state it needs it makes itself (it jams the lock,
 * drains the battery), so it does not depend on the fixture's other stations.
 */
export const DEMO_STORY: DemoStory = {
  commandTimeoutMs: 2000,
  steps: [
    // No action: the audience (and the dashboard, still connecting) gets a moment to settle.
    { caption: `The lock story of station ${STATION}, told step by step`, actions: [], holdMs: 3000 },
    {
      caption: `${STATION} is online: alice asks the API to open lock 1`,
      actions: [
        { do: 'unlock', as: AS, station: STATION, lockId: '1', expect: { success: true } },
        { do: 'awaitLock', station: STATION, lockId: '1', status: 'unlocked', withinMs: 10_000 },
      ],
      holdMs: 2000,
    },
    {
      caption: 'Nobody opens the door: lock 1 locks again by itself',
      actions: [{ do: 'awaitLock', station: STATION, lockId: '1', status: 'locked', withinMs: 15_000 }],
      holdMs: 3000,
    },
    {
      // The API's wait is real time and the link's is simulated: with the clock still, no ack comes
      // in time; once time moves on, the command arrives within its TTL and the lock opens.
      caption: 'NB-IoT link: the API gives up at 2 s, yet lock 1 opens late',
      actions: [
        { do: 'link', station: STATION, link: 'nb-iot' },
        {
          do: 'unlock',
          as: AS,
          station: STATION,
          lockId: '1',
          expect: { status: 504, messageStartsWith: 'The station did not acknowledge the command in time' },
        },
        { do: 'awaitLock', station: STATION, lockId: '1', status: 'unlocked', withinMs: 15_000 },
        { do: 'link', station: STATION, link: 'perfect' },
        { do: 'awaitLock', station: STATION, lockId: '1', status: 'locked', withinMs: 15_000 },
      ],
      holdMs: 3000,
    },
    {
      caption: 'Lock 2 is forced and jams: the station refuses to open it',
      actions: [
        { do: 'physical', station: STATION, lockId: '2', action: 'jam' },
        { do: 'unlock', as: AS, station: STATION, lockId: '2', expect: { success: false, message: 'Lock is jammed' } },
      ],
      holdMs: 5000,
    },
    {
      caption: 'The battery sinks to 11.3 V, under its 11.5 V cut-off',
      actions: [
        { do: 'battery', station: STATION, voltage: 11.3 },
        { do: 'unlock', as: AS, station: STATION, lockId: '1', expect: { success: false, message: 'Battery too low' } },
      ],
      holdMs: 5000,
    },
    {
      caption: 'A fault swallows every command: the API gives up after 2 s',
      actions: [
        { do: 'fault', station: STATION, fault: { kind: 'dropCommands' } },
        {
          do: 'unlock',
          as: AS,
          station: STATION,
          lockId: '1',
          expect: { status: 504, messageStartsWith: 'The station did not acknowledge the command in time' },
        },
      ],
      holdMs: 5000,
    },
    {
      caption: 'The station drops off the network: the broker sends its will',
      actions: [
        { do: 'connection', station: STATION, online: false },
        { do: 'awaitStation', as: AS, station: STATION, status: 'offline' },
        { do: 'unlock', as: AS, station: STATION, lockId: '1', expect: { success: false, message: 'Station is offline' } },
      ],
      holdMs: 5000,
    },
    {
      caption: 'Recovery: back online, fault cleared, lock 2 freed, charged',
      actions: [
        { do: 'connection', station: STATION, online: true },
        { do: 'awaitStation', as: AS, station: STATION, status: 'online' },
        { do: 'clearFaults', station: STATION },
        { do: 'physical', station: STATION, lockId: '2', action: 'unjam' },
        { do: 'battery', station: STATION, voltage: 'start' },
      ],
      holdMs: 3000,
    },
    {
      caption: 'All well again: alice opens lock 2',
      actions: [
        { do: 'unlock', as: AS, station: STATION, lockId: '2', expect: { success: true } },
        { do: 'awaitLock', station: STATION, lockId: '2', status: 'unlocked', withinMs: 10_000 },
        { do: 'awaitLock', station: STATION, lockId: '2', status: 'locked', withinMs: 15_000 },
      ],
      holdMs: 2000,
    },
  ],
};

/** What a fixture must hold for a story: the stations, their locks, the accounts, and each account's reach. */
export interface StoryFixture {
  accounts: readonly { email: string; stations: readonly string[] }[];
  stations: readonly { token: string; locks: readonly { lockId: string }[] }[];
}

/**
 * What the fixture lacks for the story, one sentence each; empty when the story can run on it.
 * Checked before the story starts, so a fixture edited under it fails with a reason, not halfway.
 */
export function checkStory(story: DemoStory, fixture: StoryFixture): string[] {
  const problems = new Set<string>();
  const stations = new Map(fixture.stations.map((station) => [station.token, station]));
  const accounts = new Map(fixture.accounts.map((account) => [account.email, account]));
  for (const [index, step] of story.steps.entries()) {
    if (step.caption.length > MAX_CAPTION_LENGTH) problems.add(`step ${index + 1}'s caption is longer than ${MAX_CAPTION_LENGTH} characters`);
    for (const action of step.actions) {
      const station = stations.get(action.station);
      if (!station) {
        problems.add(`the fixture has no station "${action.station}"`);
        continue;
      }
      if ('lockId' in action && !station.locks.some((lock) => lock.lockId === action.lockId)) {
        problems.add(`station "${action.station}" has no lock "${action.lockId}"`);
      }
      if ('as' in action) {
        const account = accounts.get(action.as);
        if (!account) problems.add(`the fixture has no account "${action.as}"`);
        else if (!account.stations.includes(action.station)) problems.add(`account "${action.as}" cannot reach station "${action.station}"`);
      }
    }
  }
  return [...problems];
}
