/** The live terminal dashboard and its data layer. */
export { startDashboard, type StartedDashboard } from './start-dashboard.js';
export { NOT_A_TTY_MESSAGE } from './not-a-tty.js';
export type { DashboardAccount, UnlockFunction } from './dashboard-actions.js';
export type { DashboardAddresses } from './addresses.js';
export { DashboardUrlError, parseDashboardUrl } from './dashboard-url.js';
export type * from '../client/sim-types.js';
