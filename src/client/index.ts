/** Typed clients: the reference client of the `/v1` API, and the control client of `/sim/v1`. */
export { createClient, StationSimClient, type StationSimClientOptions } from './station-sim-client.js';
export { ApiError, ApiUnreachableError, ApiTimeoutError, ApiAbortedError, isApiError, CLIENT_ERRORS, type ClientErrorCode } from './api-error.js';
export type { CallOptions } from './call-deadline.js';
export type { FetchLike } from './http-transport.js';
export type { Station, Lock, UnlockResult, TokenPair } from '../service/http/api-schemas.js';
export { ControlClient, ControlPlaneError, type ControlClientOptions, type EventStreamHandlers, type EventSubscription, type StreamState } from './control-client.js';
export type * from './sim-types.js';
export type { EventFilter, FilteredEvent, SimEventIterator } from './event-iterator.js';
export type { WaitOptions } from './live-fleet.js';
export type * from './journal-query.js';
