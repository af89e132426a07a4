/**
 * What `ControlClient.journal` and `ControlClient.verify` take (docs/control-plane.md, "Request
 * journal"). Types only; the entries themselves are the wire types of src/control/wire-schemas.ts.
 */
import type { JournalKind } from '../control/wire-schemas.js';

export type { ApiFault, ApiFaultKind, ApiFaultSpec, JournalApiEntry, JournalCommandEntry, JournalEntry, JournalKind, JournalReply } from '../control/wire-schemas.js';

/** The query of `GET /sim/v1/journal`. */
export interface ControlJournalQuery {
  /** Only entries with a greater `seq` (a `mark`). @default 0 */
  since?: number;
  kind?: JournalKind;
  /** A command's station, or a request's `token` field. */
  token?: string;
  /** @default 10000 */
  limit?: number;
}

/** Which journal entries `verify` counts: those matching every field given. */
export interface ControlVerifyQuery {
  /** A mark (`await control.mark()`). @default 0: all the journal holds */
  since?: number;
  kind?: JournalKind;
  /** `GET`, `POST`, … (any case). */
  method?: string;
  /** A route pattern as `api.request` shows it, `/v1/stations/:station_token`, or with its method as API faults take it, `GET /v1/stations/:station_token`. */
  route?: string;
  /** The station. */
  token?: string;
  lockId?: string;
  /** The HTTP status of a request. */
  status?: number;
}

/** How many entries `verify` expects. With none of them, at least one. */
export interface ControlVerifyExpectation {
  /** Exactly this many. */
  count?: number;
  atLeast?: number;
  atMost?: number;
}
