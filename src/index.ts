/**
 * The library API of station-sim. `startSimulator` is what a test suite needs; the parts are
 * exported too, for callers that assemble their own topology.
 */
export { startSimulator, type SimulatorOptions, type StartedSimulator } from './simulator/start-simulator.js';
export { startEmbeddedBroker, type EmbeddedBrokerOptions, type StartedBroker } from './broker/embedded-broker.js';
export { startFleet, type FleetOptions, type StartedFleet } from './fleet/start-fleet.js';
export { StationClient, type StationClientOptions } from './mqtt/station-client.js';
export { StationModel, type StationSnapshot, type RejectReason } from './station/station-model.js';
export { ManualClock, systemClock, type Clock } from './shared/clock.js';
export { seededRandom, type Random } from './station/random.js';
export { loadFixture, parseFixture, FixtureError, type FixtureProblem } from './fixture/load-fixture.js';
export type { Fixture, FixtureFile, StationConfig, AccountSpec } from './fixture/fixture-schema.js';
export type { LockStatus, StationStatus } from './contract/statuses.js';
export { DEFAULT_TOPICS, StationTopics, parsePayload, encodePayload } from './contract/topics.js';
export type { StatusPayload, LockStatePayload, UnlockCommand, AckPayload } from './contract/payloads.js';
export { SimError, ERRORS, type ErrorCode } from './errors.js';
export { createClient, StationSimClient, ApiError, ApiUnreachableError, ApiTimeoutError, ApiAbortedError, isApiError, type CallOptions, type ClientErrorCode, type StationSimClientOptions, type FetchLike, type Station, type Lock, type UnlockResult, type TokenPair } from './client/index.js';
export { startApi, buildApi, type StartApiOptions, type StartedApi, type BuildApiOptions, type ApiLoggerOption, type ApiLoggerSettings } from './service/index.js';
