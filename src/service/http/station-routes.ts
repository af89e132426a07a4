/**
 * `/v1/stations/*` (interface section 4). Access is checked before existence, and a station outside
 * the account's list is the same 404 "Station not found" as a missing one, so the API does not
 * reveal which station tokens exist (interface section 7).
 */
import { SimError } from '../../errors.js';
import type { AuthService, Account } from '../auth/auth-service.js';
import { OUTCOME_UNKNOWN } from '../gateway/unlock-outcome.js';
import type { StationGateway } from '../station-gateway.js';
import type { ApiInstance } from './api-instance.js';
import { LockParamsSchema, StationParamsSchema, StationSchema, UnlockResultSchema, type Station, type UnlockResult } from './api-schemas.js';
import { authenticate } from './bearer-token.js';
import { BEARER_SECURITY, errorResponses } from './route-docs.js';

export function registerStationRoutes(app: ApiInstance, auth: AuthService, gateway: StationGateway): void {
  const stationOf = (account: Account, token: string): Station => {
    const station = account.stations.has(token) ? gateway.getStation(token) : undefined;
    if (!station) throw new SimError('STATION_NOT_FOUND');
    return station;
  };

  app.get(
    '/v1/stations/:station_token',
    {
      schema: {
        tags: ['stations'],
        operationId: 'getStation',
        summary: 'Read a station',
        description: 'The station as it last published its state over MQTT. Check `status` is `online` before sending commands (interface section 3).',
        security: BEARER_SECURITY,
        params: StationParamsSchema,
        response: { 200: StationSchema, ...errorResponses(401, 404, 503) },
      },
    },
    async (request) => {
      const account = await authenticate(auth, request);
      const station = stationOf(account, request.params.station_token);
      // What the client was shown, for the judge (client.unlock-offline-station).
      if (request.clientFacts) request.clientFacts.stationStatus = station.status;
      return station;
    },
  );

  app.post(
    '/v1/stations/:station_token/locks/:lock_id/unlock',
    {
      schema: {
        tags: ['stations'],
        operationId: 'unlockLock',
        summary: 'Unlock a lock',
        description:
          'Sends the unlock command over MQTT and waits for the station to acknowledge it. Accepted: `{"success":true}`. Offline station or rejected command: `{"success":false,"message":"…"}`. No acknowledgement in time (or the service stopped while waiting): 504, the outcome is unknown, and the station may still carry the command out until it expires; read the station before sending it again. No request body.',
        security: BEARER_SECURITY,
        params: LockParamsSchema,
        response: { 200: UnlockResultSchema, ...errorResponses(401, 404, 413, 415, 503, 504) },
      },
    },
    async (request): Promise<UnlockResult> => {
      const account = await authenticate(auth, request);
      const { station_token: token, lock_id: lockId } = request.params;
      if (!account.stations.has(token)) throw new SimError('STATION_NOT_FOUND');
      // The gateway answers an unknown station or lock with the same errors, without building the station.
      const outcome = await gateway.unlock(token, lockId);
      if (outcome.commandId) request.commandId = outcome.commandId;
      request.outcome = outcome.success ? 'accepted' : outcome.failure;
      // Sampled out under load with the request's other lines (request-sampler.ts).
      if (!request.logSampledOut) request.log.info({ station: token, lock: lockId, outcome: outcome.success ? 'accepted' : outcome.failure }, 'unlock');
      if (outcome.success) return { success: true };
      // Not `success: false`: the lock may still open (unlock-outcome.ts, OUTCOME_UNKNOWN).
      if (OUTCOME_UNKNOWN.has(outcome.failure)) throw new SimError('UNLOCK_OUTCOME_UNKNOWN', outcome.message);
      return { success: false, message: outcome.message };
    },
  );
}
