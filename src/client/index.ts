/** Typed reference client of the `/v1` API (spec/service-interface.md). */
export { createClient, StationSimClient, type StationSimClientOptions } from './station-sim-client.js';
export { ApiError, ApiUnreachableError, isApiError } from './api-error.js';
export type { FetchLike } from './http-transport.js';
export type { Station, Lock, UnlockResult, TokenPair } from '../service/http/api-schemas.js';
