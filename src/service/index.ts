/** The `/v1` Lock Station Control Service (spec/service-interface.md). */
export { buildApi, type BuildApiOptions, type ApiLoggerOption, type ApiLoggerSettings } from './build-api.js';
export { startApi, type StartApiOptions, type StartedApi } from './start-api.js';
