/**
 * Who a connection to the embedded broker is (docs/mqtt-security.md, "Identities"): the identity a
 * user name, a certificate name or a client id names, whether a client id is that identity's own,
 * and whether a password is its. Secrets are read from files or the environment as each
 * connection authenticates, and compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { DEFAULT_IDENTITIES, type MqttRole } from '../fixture/mqtt-schema.js';
import { readSecret, stationClientId, templateNamesClientId, tokenReader } from '../fixture/mqtt-identities.js';
import type { BrokerSecurity } from './broker-security.js';

/** What a connection proved it is. */
export type Who = { role: 'station'; token: string } | { role: Exclude<MqttRole, 'station'> };

/** The roles other than the station's, in the order a user name or certificate name is looked up. */
const SHARED_ROLES = ['service', 'control', 'agent', 'observer'] as const;

/** The identities of one broker's fixture. */
export class BrokerIdentities {
  readonly #security: BrokerSecurity;
  readonly #tokens: ReadonlySet<string>;
  /** The token a station's user name carries, if the name fits the station's template. */
  readonly #stationUser: (username: string) => string | undefined;
  /** The token a station's client id carries, if the id fits the station's template. */
  readonly #stationClientId: (clientId: string) => string | undefined;

  constructor(security: BrokerSecurity) {
    this.#security = security;
    this.#tokens = new Set(security.tokens);
    this.#stationUser = tokenReader(security.identities.station.username);
    this.#stationClientId = tokenReader(security.identities.station.clientId ?? DEFAULT_IDENTITIES.station.clientId!);
  }

  byUsername(username: string): Who | undefined {
    const { identities } = this.#security;
    for (const role of SHARED_ROLES) if (identities[role].username === username) return { role };
    const token = this.#stationUser(username);
    return token !== undefined && this.#tokens.has(token) ? { role: 'station', token } : undefined;
  }

  /**
   * A certificate's CN: a user name first, as Mosquitto's `use_identity_as_username` takes it; else
   * what `station-sim certs` writes (a station's token, `station-sim-service`, `-control`, `-observer`).
   */
  byCertificateName(cn: string): Who | undefined {
    const byName = this.byUsername(cn);
    if (byName) return byName;
    if (this.#tokens.has(cn)) return { role: 'station', token: cn };
    for (const role of SHARED_ROLES) if (DEFAULT_IDENTITIES[role].username === cn) return { role };
    return undefined;
  }

  /**
   * Whose client id this is: a station's when it is exactly that station's id, else the identity
   * with the longest template it fits (the template, or the template, `-` and anything), so that
   * `station-sim-api-x` of a station with token `api-x` stays the station's, and a template that
   * extends another (`app` and `app-control`) keeps its own ids. Undefined when no template names
   * it: only an identity without a template of its own (the observer by default) may use it.
   */
  byClientId(clientId: string): Who | undefined {
    const token = this.#stationClientId(clientId);
    if (token !== undefined && this.#tokens.has(token)) return { role: 'station', token };
    let owner: Who | undefined;
    let longest = -1;
    for (const role of SHARED_ROLES) {
      const template = this.#security.identities[role].clientId;
      if (template === undefined || template.length <= longest) continue;
      if (templateNamesClientId(template, clientId)) {
        owner = { role };
        longest = template.length;
      }
    }
    return owner;
  }

  clientIdBelongs(who: Who, clientId: string): boolean {
    if (who.role === 'station') return clientId === stationClientId(this.#security.identities, who.token);
    return templateNamesClientId(this.#security.identities[who.role].clientId, clientId);
  }

  /**
   * Whether `password` is the one of `who`. Compared in constant time over fixed-length digests,
   * also when there is no identity or no secret to compare with.
   */
  async passwordMatches(who: Who | undefined, password: Buffer | undefined): Promise<boolean> {
    const expected = who ? await this.#secret(who) : undefined;
    const given = digest(password ?? Buffer.alloc(0));
    return timingSafeEqual(given, expected ?? digest(Buffer.from('\u0000no identity'))) && expected !== undefined && password !== undefined;
  }

  async #secret(who: Who): Promise<Buffer | undefined> {
    const source = this.#security.identities[who.role].password;
    if (!source) return undefined;
    // Read at each CONNECT: a password changed in its file or the environment holds from the next one.
    const secret = await readSecret(source, { token: who.role === 'station' ? who.token : '', baseDir: this.#security.baseDir, env: process.env });
    return secret.ok ? digest(Buffer.from(secret.value)) : undefined;
  }
}

/** How an identity is named in refusals: a role, or `station:` and a station's token. */
export function identityName(who: Who): string {
  return who.role === 'station' ? `station:${who.token}` : who.role;
}

export function sameIdentity(a: Who, b: Who): boolean {
  return a.role === b.role && (a.role !== 'station' || a.token === (b as { token: string }).token);
}

function digest(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}
