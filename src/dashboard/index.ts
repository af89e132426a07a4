/** The live terminal dashboard and its data layer. */
export { startDashboard, NOT_A_TTY_MESSAGE, type StartedDashboard } from './start-dashboard.js';
export type { DashboardAccount, UnlockFunction } from './dashboard-actions.js';
export type { DashboardAddresses } from './addresses.js';
export { DashboardUrlError, parseDashboardUrl } from './dashboard-url.js';
export type * from '../client/sim-types.js';
