/**
 * The embedded broker, secured (docs/mqtt-security.md, "The embedded broker, secured"; docs/design.md,
 * "Trust model"): a `BrokerGuard`, built from `brokerSecurity(fixture)` (broker-security.ts), gives
 * aedes its `authenticate`, `authorizePublish`, `authorizeSubscribe` and `authorizeForward` hooks
 * and counts what they refuse (refusal-log.ts). Who a connection is comes from broker-identities.ts,
 * what it may do from broker-acl.ts.
 *
 * The hooks run on every packet, so the per-packet path is cheap: at CONNECT each client gets an
 * `Acl` compiled for it; a station's PUBLISH is then one or two string comparisons, no regular
 * expression, no allocation.
 */
import type { TLSSocket } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import { BrokerAcls, EVERYTHING, type Acl } from './broker-acl.js';
import { BrokerIdentities, identityName, sameIdentity, type Who } from './broker-identities.js';
import type { BrokerSecurity } from './broker-security.js';
import type { RefusalLog } from './refusal-log.js';

/** What the hooks need of an aedes client. */
interface GuardedClient {
  id: string;
  conn: unknown;
  req?: IncomingMessage | undefined;
  _will?: { topic: string } | null;
  close(): void;
}

const ACL = Symbol('acl');
/** Set on a connection granted a filter wider than its read rights: its deliveries are checked. */
const WIDE = Symbol('wide');
type WithAcl = GuardedClient & { [ACL]?: Acl; [WIDE]?: boolean };

type AuthError = Error & { returnCode: 2 | 4 | 5 };
const authError = (returnCode: 2 | 4 | 5, message: string): AuthError => Object.assign(new Error(message), { returnCode });

/**
 * Authentication and ACLs for one broker. `trust(stream)` marks a connection made inside the
 * simulator's process: it is who its client id says.
 */
export class BrokerGuard {
  readonly security: BrokerSecurity;
  readonly refusals: RefusalLog;
  readonly #trusted = new WeakSet<object>();
  readonly #identities: BrokerIdentities;
  readonly #acls: BrokerAcls;

  constructor(security: BrokerSecurity, refusals: RefusalLog) {
    this.security = security;
    this.refusals = refusals;
    this.#identities = new BrokerIdentities(security);
    this.#acls = new BrokerAcls(security);
  }

  /** A connection made inside the process (the stations' in-memory links). */
  trust(connection: object): void {
    this.#trusted.add(connection);
  }

  /** aedes' `authenticate`. Open brokers let everyone in. */
  authenticate(client: GuardedClient, username: string | undefined, password: Buffer | undefined, done: (error: AuthError | null, ok: boolean) => void): void {
    if (!this.security.auth) return done(null, true);
    void this.#authenticate(client as WithAcl, username, password).then(
      (acl) => {
        (client as WithAcl)[ACL] = acl;
        done(null, true);
      },
      (error: AuthError & { identity?: string }) => {
        this.refusals.add({ kind: 'connect', clientId: client.id, reason: error.message, ...(error.identity ? { identity: error.identity } : {}) });
        done(error, false);
      },
    );
  }

  async #authenticate(client: WithAcl, username: string | undefined, password: Buffer | undefined): Promise<Acl> {
    let who: Who | undefined;
    if (this.#trusted.has(client.conn as object)) {
      // Inside the process: the client id says who it is; a session the fixture does not name is the simulator's own.
      who = this.#identities.byClientId(client.id);
      if (!who) return EVERYTHING;
    } else {
      const tls = peerSocket(client);
      const cert = tls?.getPeerCertificate();
      if (tls && cert && Object.keys(cert).length > 0) {
        if (!tls.authorized) throw authError(5, `client certificate not accepted (${String(tls.authorizationError ?? 'unverified')})`);
        const cn = cert.subject?.CN;
        who = typeof cn === 'string' ? this.#identities.byCertificateName(cn) : undefined;
        if (!who) throw authError(5, 'the client certificate names no identity of the fixture');
      } else {
        who = username === undefined ? undefined : this.#identities.byUsername(username);
        const match = await this.#identities.passwordMatches(who, password);
        if (!who || !match) throw authError(4, username === undefined ? 'no user name or client certificate' : 'bad user name or password');
      }
    }
    const identity = identityName(who);
    if (!this.#identities.clientIdBelongs(who, client.id)) throw Object.assign(authError(2, `client id is not one of ${identity}'s`), { identity });
    // Its own template may be wide (the observer's is any client id): an id that another
    // identity's template names is that identity's, and taking it would end its session and fire
    // its will (MQTT 3.1.1, section 3.1.4). Refused before aedes looks for a session of that id.
    const owner = this.#identities.byClientId(client.id);
    if (owner && !sameIdentity(owner, who)) throw Object.assign(authError(2, `client id is not one of ${identity}'s`), { identity });
    const acl = this.#acls.of(who, client.id);
    const will = client._will;
    if (will && !acl.canPublish(will.topic)) throw Object.assign(authError(5, `last will on a topic ${identity} may not publish`), { identity });
    return acl;
  }

  /** aedes' `authorizePublish`: a refused PUBLISH closes the connection (MQTT 3.1.1 §3.3.5 allows either that or a silent drop). */
  authorizePublish(client: GuardedClient | null, packet: { topic: string }, done: (error?: Error | null) => void): void {
    const acl = client && (client as WithAcl)[ACL];
    if (!this.security.auth || !client) return done(null);
    if (acl?.canPublish(packet.topic)) return done(null);
    this.refusals.add({ kind: 'publish', clientId: client.id, topic: packet.topic, reason: 'not allowed to publish here', ...(acl ? { identity: acl.identity } : {}) });
    done(new Error('publish not authorized'));
  }

  /**
   * aedes' `authorizeForward`, asked for every message delivered to every client: only a
   * connection granted a wider filter has each message checked against what it may read.
   */
  authorizeForward<P extends { topic: string }>(client: GuardedClient, packet: P): P | null {
    const guarded = client as WithAcl;
    if (guarded[WIDE] !== true) return packet;
    return guarded[ACL]?.canRead?.(packet.topic) === true ? packet : null;
  }

  /** aedes' `authorizeSubscribe`: a refused filter gets 128 in the SUBACK. */
  authorizeSubscribe(client: GuardedClient, sub: { topic: string }, done: (error: Error | null, sub?: unknown) => void): void {
    if (!this.security.auth) return done(null, sub);
    const acl = (client as WithAcl)[ACL];
    if (acl?.canSubscribe(sub.topic)) return done(null, sub);
    if (acl?.overlapsReadable?.(sub.topic)) {
      (client as WithAcl)[WIDE] = true;
      return done(null, sub);
    }
    this.refusals.add({ kind: 'subscribe', clientId: client.id, topic: sub.topic, reason: 'not allowed to subscribe here', ...(acl ? { identity: acl.identity } : {}) });
    done(null, null);
  }
}

/** The TLS socket under a connection: the connection itself (mqtts), or under its WebSocket (wss). */
function peerSocket(client: GuardedClient): TLSSocket | undefined {
  const isTls = (socket: unknown): socket is TLSSocket => typeof (socket as TLSSocket | undefined)?.getPeerCertificate === 'function';
  if (isTls(client.conn)) return client.conn;
  if (isTls(client.req?.socket)) return client.req.socket;
  return undefined;
}
