/**
 * Request and response schemas of the `/v1` API (interface section 4). Fastify validates requests
 * against them, `@fastify/swagger` turns them into the OpenAPI document, and the TypeScript types
 * of the service and of the reference client are derived from them, never written twice
 * (STYLE.md, "Strict, typed, validated once").
 */
import { Type, type Static } from '@sinclair/typebox';
import { LockStatusSchema, StationStatusSchema } from '../../contract/statuses.js';

const strict = { additionalProperties: false } as const;

/**
 * Upper bounds on string fields. The body limit already caps a request at 16 KiB; these make the
 * schema say so per field and keep a megabyte-long "password" away from scrypt.
 */
const MAX_EMAIL = 320;
const MAX_PASSWORD = 1024;
const MAX_TOKEN = 2048;

export const CredentialsSchema = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: MAX_EMAIL, description: 'Email issued to the account.' }),
    password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD, description: 'Password issued to the account.' }),
  },
  { ...strict, title: 'Credentials', description: 'Login request (interface section 4, POST /v1/auth/login).' },
);

export const RefreshTokenBodySchema = Type.Object(
  {
    refreshToken: Type.String({ minLength: 1, maxLength: MAX_TOKEN, description: 'Refresh token from login or an earlier refresh.' }),
  },
  { ...strict, title: 'RefreshTokenBody', description: 'Body of refresh and revoke (docs/api.md, section 4).' },
);

export const TokenPairSchema = Type.Object(
  {
    accessToken: Type.String({ description: 'JWT (HS256). Send as `Authorization: Bearer <accessToken>`; `exp` holds its expiry.' }),
    refreshToken: Type.String({ description: 'Opaque; exchange it at /v1/auth/refresh. Each refresh token works once.' }),
  },
  { ...strict, title: 'TokenPair', description: 'Token pair (interface section 2).' },
);

export const SuccessSchema = Type.Object({ success: Type.Literal(true) }, { ...strict, title: 'Success' });

export const LockSchema = Type.Object(
  {
    lockId: Type.String({ description: 'Identifier of the lock inside the station; the same string is the `lock_id` path segment.' }),
    status: Type.Union([LockStatusSchema], { description: '`locked`, `unlocked` or `jammed`.' }),
    lastUpdated: Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp of the last lock state the station published.' }),
  },
  { ...strict, title: 'Lock', description: 'Lock (interface section 2).' },
);

export const StationSchema = Type.Object(
  {
    stationId: Type.Integer({ description: 'Numeric id of the station.' }),
    batteryVoltage: Type.Number({ description: 'Battery voltage in volts.' }),
    lastConnection: Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp; 1970-01-01T00:00:00.000Z when the station never reported.' }),
    status: Type.Union([StationStatusSchema], { description: '`online` (commands may be sent) or `offline`.' }),
    locks: Type.Array(LockSchema),
  },
  { ...strict, title: 'Station', description: 'Station (interface section 2), as the station last published it over MQTT.' },
);

export const UnlockResultSchema = Type.Object(
  {
    success: Type.Boolean({ description: '`true` when the station accepted the command.' }),
    message: Type.Optional(Type.String({ description: 'Why the command failed; present only when `success` is false.' })),
  },
  { ...strict, title: 'UnlockResult', description: 'Unlock result (interface section 2).' },
);

export const ErrorBodySchema = Type.Object(
  { message: Type.String({ description: 'Human-readable description of the failure.' }) },
  { ...strict, title: 'Error', description: 'Error body (interface section 7).' },
);

export const StationParamsSchema = Type.Object(
  { station_token: Type.String({ description: 'Station token, issued at installation.' }) },
  strict,
);

export const LockParamsSchema = Type.Object(
  {
    station_token: Type.String({ description: 'Station token, issued at installation.' }),
    lock_id: Type.String({ description: 'The `lockId` of a lock of the station.' }),
  },
  strict,
);

export type TokenPair = Static<typeof TokenPairSchema>;
export type Lock = Static<typeof LockSchema>;
export type Station = Static<typeof StationSchema>;
export type UnlockResult = Static<typeof UnlockResultSchema>;
