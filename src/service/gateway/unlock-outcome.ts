/**
 * What an unlock command came to. These are not errors of the HTTP API: the interface (section 4)
 * answers every unlock that reached a known lock with 200 `{ success, message? }` (DESIGN.md, "Choices
 * where the interface leaves gaps"), so the reasons live here as outcomes, each with a stable code
 * for logs and tests and the message a client sees. docs/api.md lists them.
 */
export const UNLOCK_FAILURES = {
  /** The station's retained status says offline, it never reported, or the service has lost the broker. */
  STATION_OFFLINE: 'Station is offline',
  /** No ack within the command timeout. */
  ACK_TIMEOUT: 'Station did not acknowledge the command in time',
  /** Ack `reason: "jammed"`. */
  LOCK_JAMMED: 'Lock is jammed',
  /** Ack `reason: "low_battery"`. */
  BATTERY_LOW: 'Battery too low',
  /** Ack `reason: "unknown_lock"`: the station does not know a lock the fixture lists. */
  LOCK_UNKNOWN_TO_STATION: 'Station does not know this lock',
  /** Ack with any other reason; the message names the reason when it is a plain word. */
  REJECTED: 'Station rejected the command',
  /** The gateway was stopped while the command waited. */
  SERVICE_STOPPING: 'The service is shutting down',
} as const;

export type UnlockFailure = keyof typeof UNLOCK_FAILURES;

/**
 * `commandId` is set once a command was published, so a transcript can link the HTTP request to
 * the MQTT command, its ack and the state changes that follow.
 */
export type UnlockOutcome = ({ success: true } | { success: false; failure: UnlockFailure; message: string }) & { commandId?: string };

export const UNLOCK_ACCEPTED: UnlockOutcome = Object.freeze({ success: true });

export function unlockFailed(failure: UnlockFailure, message: string = UNLOCK_FAILURES[failure]): UnlockOutcome {
  return { success: false, failure, message };
}

/**
 * Maps an ack's `reason` to an outcome. The reason comes from a station over the network, so an
 * unknown one is echoed only when it is a short plain word, never as free text.
 */
export function rejectedOutcome(reason: string): UnlockOutcome {
  switch (reason) {
    case 'jammed':
      return unlockFailed('LOCK_JAMMED');
    case 'low_battery':
      return unlockFailed('BATTERY_LOW');
    case 'offline':
      return unlockFailed('STATION_OFFLINE');
    case 'unknown_lock':
      return unlockFailed('LOCK_UNKNOWN_TO_STATION');
    default:
      return /^[A-Za-z0-9_.-]{1,64}$/.test(reason)
        ? unlockFailed('REJECTED', `${UNLOCK_FAILURES.REJECTED} (${reason})`)
        : unlockFailed('REJECTED');
  }
}
