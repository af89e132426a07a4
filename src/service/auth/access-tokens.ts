/**
 * Access tokens: JWTs signed with HS256 through `jose` (interface section 5.1, 5.4). Verification
 * pins the algorithm to HS256, so `alg: none` and every other algorithm fail, and checks the
 * signature, issuer, audience and expiry against the injected clock.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { ServiceClock } from '../service-clock.js';

const ALGORITHM = 'HS256';
const ISSUER = 'station-sim';
const AUDIENCE = 'station-sim/v1';

export interface AccessTokenOptions {
  /** HMAC key; at least 32 bytes (RFC 7518, section 3.2). */
  secret: Uint8Array;
  /** Lifetime in seconds; becomes `exp - iat`. */
  ttlSeconds: number;
  clock: ServiceClock;
}

/** What a verified access token says. */
export interface AccessClaims {
  /** Account id. */
  sub: string;
  /** The account's revocation generation when the token was issued (revoke-all bumps it). */
  gen: number;
  /** The token family (session) the token was issued in; revoking the family ends the token. */
  sid: string;
}

/** Verified tokens remembered, so a client reusing its token is not re-verified on every request. */
const VERIFIED_CACHE_SIZE = 10_000;

export class AccessTokens {
  readonly #options: AccessTokenOptions;
  /**
   * Token → its claims and expiry, for tokens whose signature has been verified. Checking an HMAC
   * signature through jose costs about a tenth of an unlock request (CPU profile, bench/README.md);
   * a token's signature cannot change, so once is enough. Expiry is still checked against the
   * clock on every use, and revocation is checked by the caller on every use.
   */
  readonly #verified = new Map<string, { claims: AccessClaims; expiresAtMs: number }>();

  constructor(options: AccessTokenOptions) {
    this.#options = options;
  }

  /** Signs a token with `sub`, `iat`, `exp`, `jti`, `iss`, `aud`, the revocation generation `gen` and the family `sid`. */
  async issue(claims: AccessClaims): Promise<string> {
    const issuedAt = Math.floor(this.#options.clock.now() / 1000);
    return new SignJWT({ gen: claims.gen, sid: claims.sid })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + this.#options.ttlSeconds)
      .setJti(randomUUID())
      .sign(this.#options.secret);
  }

  /**
   * The claims of a valid token, or undefined for anything else: malformed, tampered, signed with
   * another key or algorithm, unsigned, expired, or for another issuer or audience. The reason is
   * not returned: every one of them is the same 401 "Token is invalid" (interface section 7).
   */
  async verify(token: string): Promise<AccessClaims | undefined> {
    const known = this.#verified.get(token);
    if (known) {
      if (this.#options.clock.now() < known.expiresAtMs) return known.claims;
      this.#verified.delete(token);
      return undefined;
    }
    try {
      const { payload } = await jwtVerify(token, this.#options.secret, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        audience: AUDIENCE,
        currentDate: new Date(this.#options.clock.now()),
        requiredClaims: ['sub', 'iat', 'exp', 'jti'],
      });
      const { sub, gen, sid, exp } = payload;
      if (typeof sub !== 'string' || typeof gen !== 'number' || typeof sid !== 'string' || typeof exp !== 'number') return undefined;
      const claims = { sub, gen, sid };
      this.#remember(token, claims, exp * 1000);
      return claims;
    } catch {
      return undefined;
    }
  }

  #remember(token: string, claims: AccessClaims, expiresAtMs: number): void {
    if (this.#verified.size >= VERIFIED_CACHE_SIZE) {
      // Oldest first: Map iteration follows insertion order.
      const oldest = this.#verified.keys().next().value;
      if (oldest !== undefined) this.#verified.delete(oldest);
    }
    this.#verified.set(token, { claims, expiresAtMs });
  }
}
