/** The live terminal dashboard and its data layer. */
export { startDashboard, NOT_A_TTY_MESSAGE, type DashboardOptions, type StartedDashboard } from './start-dashboard.js';
export type { UnlockFunction } from './dashboard-actions.js';
export type { CaptionSource, CaptionState } from './Caption.js';
export { DashboardUrlError, parseDashboardUrl } from './dashboard-url.js';
export {
  ControlClient,
  ControlPlaneError,
  type ControlClientOptions,
  type DashboardControl,
  type EventStreamHandlers,
  type EventSubscription,
  type StreamState,
} from '../client/control-client.js';
export { FleetStore, applyFleetEvent, type FleetChange, type FleetStoreOptions } from './fleet-store.js';
export type * from '../client/sim-types.js';
export { parseSimEvent } from '../client/sim-types.js';
