/** Test-framework helpers: `import { withSimulator, startTestSimulator } from 'station-sim/testing'`. */
export { startTestSimulator, type TestSimulator, type TestSimulatorOptions } from './test-simulator.js';
export {
  withSimulator,
  type SuiteHooks,
  type AllHooks,
  type NodeTestHooks,
  type SuiteHook,
  type TimeoutHook,
  type OptionsHook,
  type WithSimulatorOptions,
} from './suite-hooks.js';
export { ATTACH_ENV } from './attach.js';
export { ControlClient, ControlPlaneError, type ControlClientOptions } from '../client/control-client.js';
// The errors a suite catches, the same classes as those of 'station-sim' and 'station-sim/client'.
export { ApiError, ApiUnreachableError, ApiTimeoutError, ApiAbortedError, isApiError } from '../client/api-error.js';
export { SimError } from '../errors.js';
export type { EventFilter, FilteredEvent, SimEventIterator } from '../client/event-iterator.js';
export type { WaitOptions } from '../client/live-fleet.js';
export type { ClockReply, Fault, FaultSpec, LockStatus, ResetReply, SimEvent, SimEventType, SimStation, StationStatus } from '../client/sim-types.js';
export type { ApiFault, ApiFaultKind, ApiFaultSpec, ControlJournalQuery, ControlVerifyExpectation, ControlVerifyQuery, JournalEntry, JournalReply } from '../client/journal-query.js';
