/**
 * What an unlock command came to. These are not errors of the HTTP API: the interface (section 4)
 * answers every unlock that reached a known lock with 200 `{ success, message? }` (DESIGN.md, "Choices
 * where the interface leaves gaps"), so the reasons live here as outcomes, each with a stable code
 * for logs and tests and the message a client sees. docs/api.md lists them.
 */
export const UNLOCK_FAILURES = {
  /** The station's retained status says offline, it never reported, or the service has lost the broker. */
  STATION_OFFLINE: 'Station is offline',
  /**
   * No ack within the command timeout: the outcome is unknown (see `OUTCOME_UNKNOWN`). The gateway
   * adds how long the station may still act on the command.
   */
  ACK_TIMEOUT: 'The station did not acknowledge the command in time; it may still carry it out until the command expires',
  /** Ack `reason: "jammed"`. */
  LOCK_JAMMED: 'Lock is jammed',
  /** Ack `reason: "low_battery"`. */
  BATTERY_LOW: 'Battery too low',
  /** Ack `reason: "unknown_lock"`: the station does not know a lock the fixture lists. */
  LOCK_UNKNOWN_TO_STATION: 'Station does not know this lock',
  /** Ack `reason: "expired"`: the command reached the station after its TTL, and it did not act on it. */
  COMMAND_EXPIRED: 'The command reached the station too late and was not carried out',
  /** Ack with any other reason; the message names the reason when it is a plain word. */
  REJECTED: 'Station rejected the command',
  /**
   * MQTT 5 only: the broker answered the command's PUBLISH with a PUBACK reason code of 0x80 or more
   * (MQTT 5.0, section 3.4.2.1), e.g. 0x87 "not authorized" from an ACL, so it did not pass the
   * command on. The gateway adds the code and its name.
   */
  BROKER_REFUSED: 'The MQTT broker refused the command',
  /** The gateway was stopped before the command was sent: nothing was sent. */
  SERVICE_STOPPING: 'The service is shutting down',
  /** The gateway was stopped while a sent command waited for its ack: the outcome is unknown. */
  STOPPED_IN_FLIGHT: 'The service stopped before the station acknowledged the command; it may still carry it out until the command expires',
} as const;

export type UnlockFailure = keyof typeof UNLOCK_FAILURES;

/**
 * Failures after which the lock may still open: the command was sent and no ack came back, so the
 * station may have it (or get it) and act on it until its TTL runs out (`behaviour.commandTtlMs`).
 * The API answers these 504 `UNLOCK_OUTCOME_UNKNOWN` rather than a definite `success: false`
 * (docs/api.md, "When the outcome is unknown").
 */
export const OUTCOME_UNKNOWN: ReadonlySet<UnlockFailure> = new Set<UnlockFailure>(['ACK_TIMEOUT', 'STOPPED_IN_FLIGHT']);

/** The message of an unknown outcome, saying how long the station may still act on the command. */
export function outcomeUnknown(failure: 'ACK_TIMEOUT' | 'STOPPED_IN_FLIGHT', commandTtlMs: number): UnlockOutcome {
  const seconds = Math.ceil(commandTtlMs / 1000);
  return unlockFailed(failure, `${UNLOCK_FAILURES[failure]} (within ${seconds} s of sending it): read the station before sending it again`);
}

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
    case 'expired':
      return unlockFailed('COMMAND_EXPIRED');
    default:
      return /^[A-Za-z0-9_.-]{1,64}$/.test(reason)
        ? unlockFailed('REJECTED', `${UNLOCK_FAILURES.REJECTED} (${reason})`)
        : unlockFailed('REJECTED');
  }
}
