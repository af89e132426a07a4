/** The live terminal dashboard and its data layer. */
export { startDashboard, NOT_A_TTY_MESSAGE, type DashboardOptions, type StartedDashboard } from './start-dashboard.js';
export type { UnlockFunction } from './dashboard-actions.js';
export { DashboardUrlError, parseDashboardUrl } from './dashboard-url.js';
export {
  ControlConnection,
  ControlPlaneError,
  type ControlConnectionOptions,
  type DashboardControl,
  type EventStreamHandlers,
  type EventSubscription,
  type StreamState,
} from './control-connection.js';
export { FleetStore, applyFleetEvent, type FleetChange, type FleetStoreOptions } from './fleet-store.js';
export type * from './sim-types.js';
export { parseSimEvent } from './sim-types.js';
