/** The `/v1` Lock Station Control Service (spec/service-interface.md). */
export { buildApi, DEFAULT_BODY_LIMIT_BYTES, type BuildApiOptions, type ApiInstance, type ApiLoggerOption, type ApiLoggerSettings } from './build-api.js';
export { startApi, type StartApiOptions, type StartedApi } from './start-api.js';
export {
  startMqttGateway,
  UNLOCK_FAILURES,
  type StationGateway,
  type MqttGatewayOptions,
  type StartedMqttGateway,
  type UnlockOutcome,
  type UnlockFailure,
} from './station-gateway.js';
export { NEVER_REPORTED } from './gateway/station-state-cache.js';
export { JWT_SECRET_ENV } from './auth/jwt-secret.js';
export type { ServiceClock } from './service-clock.js';
export type { ServiceLogger } from './service-logger.js';
export type { Station, Lock, TokenPair, UnlockResult, ErrorBody } from './http/api-schemas.js';
