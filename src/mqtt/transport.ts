/**
 * How an MQTT client reaches its broker. In-process clients get a real MQTT session over an
 * in-memory stream into aedes; everything else dials the broker's URL: TCP, TLS, WebSocket or
 * WebSocket over TLS (docs/mqtt-security.md, "Connections"), with TCP_NODELAY set on every socket,
 * including after each reconnect (Nagle's algorithm adds about 44 ms per round trip on loopback).
 */
import { redactUrl } from '../shared/redact-url.js';
import net from 'node:net';
import tls from 'node:tls';
import { MqttClient, type IClientOptions } from 'mqtt';
import WebSocket, { createWebSocketStream } from 'ws';
import { duplexPair } from './duplex-pair.js';
import { LeanMqttClient, MQTT_WS_PROTOCOL, type LeanClientOptions, type LeanTarget, type MqttSession, type TlsSource } from './lean-client/index.js';
import { SimError } from '../errors.js';
import type { StreamAcceptor } from './broker-link.js';
import { Mqtt5Session } from './mqtt5-session.js';
import type { MqttProtocolVersion } from './mqtt-version.js';

/**
 * How the broker's certificate is checked on `mqtts://` and `wss://` (the same for every party of a
 * process; each party's client certificate is its identity's, see identity.ts).
 */
export interface BrokerTls {
  /** CA bundle (PEM) the broker certificate must chain to. @default the system CAs */
  ca?: string | Buffer;
  /** Host name the broker certificate must carry. @default the URL host */
  servername?: string;
  /** Do not verify the broker certificate at all (`--insecure`). @default false */
  insecure?: boolean;
}

/** A client certificate and its private key, PEM. */
export interface ClientCertificate {
  cert: string | Buffer;
  key: string | Buffer;
}

/**
 * A network transport is any URL of docs/mqtt-security.md's four schemes; `tls` applies to
 * `mqtts://` and `wss://` only.
 */
export type MqttTransport =
  | { kind: 'memory'; broker: StreamAcceptor }
  | {
      kind: 'tcp';
      url: string;
      tls?: BrokerTls;
      /**
       * MQTT protocol level of every session on this transport: 4 (3.1.1, the lean client) or 5
       * (MQTT 5.0, mqtt5-session.ts). In memory it is always 4: the embedded broker speaks 3.1.1.
       * @default 4
       */
      protocolVersion?: MqttProtocolVersion;
    };

export type BrokerScheme = 'mqtt' | 'mqtts' | 'ws' | 'wss';

/** A broker address split into what a socket needs and what the CONNECT packet needs. */
export interface BrokerAddress {
  scheme: BrokerScheme;
  host: string;
  port: number;
  /** The HTTP path of a WebSocket broker (`/` when the URL has none). */
  path: string;
  username?: string;
  password?: string;
}

const SCHEMES: Record<string, { scheme: BrokerScheme; port: number }> = {
  'mqtt:': { scheme: 'mqtt', port: 1883 },
  'tcp:': { scheme: 'mqtt', port: 1883 },
  'mqtts:': { scheme: 'mqtts', port: 8883 },
  'ssl:': { scheme: 'mqtts', port: 8883 },
  'tls:': { scheme: 'mqtts', port: 8883 },
  'ws:': { scheme: 'ws', port: 80 },
  'wss:': { scheme: 'wss', port: 443 },
};

/** True for a URL scheme whose connection is TLS. */
export function isSecureScheme(scheme: BrokerScheme): boolean {
  return scheme === 'mqtts' || scheme === 'wss';
}

/** Parses `mqtt://[user:pass@]host[:port]` and the other schemes of docs/mqtt-security.md. */
export function parseBrokerUrl(url: string): BrokerAddress {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // A password typed with # or ? in it makes the rest of the URL a fragment or a query.
    const hint = url.includes('@') ? ' (percent-encode any #, ?, / or @ in the user name or password)' : '';
    throw new SimError('BROKER_UNREACHABLE', `Invalid broker URL "${redactUrl(url)}": expected mqtt://host:port${hint}`);
  }
  const known = SCHEMES[parsed.protocol];
  if (!known) {
    throw new SimError('BROKER_UNREACHABLE', `Unsupported broker URL scheme "${parsed.protocol}" (use mqtt://, mqtts://, ws:// or wss://host:port)`);
  }
  const address: BrokerAddress = {
    scheme: known.scheme,
    host: parsed.hostname.replace(/^\[|\]$/g, '') || 'localhost',
    port: parsed.port === '' ? known.port : Number(parsed.port),
    path: `${parsed.pathname || '/'}${parsed.search}`,
  };
  const invalid = (why: string): SimError => new SimError('BROKER_UNREACHABLE', `Invalid broker URL "${redactUrl(url)}": ${why}`);
  try {
    if (parsed.username) address.username = decodeURIComponent(parsed.username);
    if (parsed.password) address.password = decodeURIComponent(parsed.password);
  } catch {
    throw invalid('the user name or password is not percent-encoded (write % as %25)');
  }
  // MQTT 3.1.1 has no password without a user name [MQTT-3.1.2-22].
  if (address.password !== undefined && address.username === undefined) throw invalid('a password needs a user name');
  return address;
}

/**
 * The options of `tls.connect` (and of `ws` for `wss://`) for this broker and client certificate.
 * The host name checked is `servername`, else the URL host; an IP address is not sent as SNI
 * (RFC 6066, section 3), but the certificate is still checked against it.
 */
export function tlsOptions(address: BrokerAddress, settings: BrokerTls = {}, clientCert?: ClientCertificate): tls.ConnectionOptions {
  const options: tls.ConnectionOptions = { rejectUnauthorized: settings.insecure !== true };
  const name = settings.servername ?? address.host;
  if (net.isIP(name) === 0) options.servername = name;
  else if (settings.servername !== undefined) options.checkServerIdentity = (_host, cert) => tls.checkServerIdentity(name, cert);
  if (settings.ca !== undefined) options.ca = settings.ca;
  if (clientCert) {
    options.cert = clientCert.cert;
    options.key = clientCert.key;
  }
  return options;
}

/** The URL a WebSocket connection opens: without credentials, which go in CONNECT, not HTTP. */
function webSocketUrl(address: BrokerAddress): string {
  const host = net.isIPv6(address.host) ? `[${address.host}]` : address.host;
  return `${address.scheme}://${host}:${address.port}${address.path}`;
}


/**
 * Where the client certificate comes from: given, or read when each connection opens (a station's,
 * so that 10,000 stations do not hold 10,000 certificates and keys between connections).
 */
export type ClientCertSource = ClientCertificate | (() => Promise<ClientCertificate>);

function silentLog(): void {}

/**
 * How long a connection may wait for its CONNACK before it counts as failed, as the lean clients
 * do: mqtt.js's own default (30 s) left a port that takes TCP and never answers hanging for about
 * 32 s before `start` failed.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Creates an mqtt.js client that connects (and reconnects) through `transport`.
 *
 * A refused CONNACK (return code 3 "server unavailable" while EMQX or HiveMQ start, 5 "not
 * authorized" while a password is being changed) does not end the reconnecting: mqtt.js 5 stops
 * for good after one unless `reconnectOnConnackError` is set, which would leave the control plane
 * and the fleet agent cut off until restarted while the lean clients came back. A refusal of the
 * first connection still fails the start: `firstConnect` ends the client on its first error.
 */
export function createMqttClient(transport: MqttTransport, options: IClientOptions & { clientCert?: ClientCertificate }): MqttClient {
  // A shared no-op logger: by default mqtt.js makes a `debug` instance per client, about 1 KiB
  // each, which a 100,000-station fleet pays 100,000 times (heap snapshot, bench/README.md).
  const base: IClientOptions & { clientCert?: ClientCertificate } = {
    protocolVersion: transport.kind === 'tcp' ? (transport.protocolVersion ?? 4) : 4,
    log: silentLog,
    connectTimeout: CONNECT_TIMEOUT_MS,
    reconnectOnConnackError: true,
    ...options,
  };
  if (transport.kind === 'memory') {
    const { broker } = transport;
    // In memory there is no TLS: the certificate is left out rather than handed to mqtt.js.
    const { clientCert: _inMemoryHasNoTls, ...inMemory } = base;
    return new MqttClient(() => {
      const [client, server] = duplexPair();
      broker.handle(server);
      return client;
    }, inMemory);
  }
  const { clientCert, ...rest } = base;
  const address = parseBrokerUrl(transport.url);
  Object.assign(rest, urlCredentials(address, rest));
  const secure = isSecureScheme(address.scheme) ? tlsOptions(address, transport.tls, clientCert) : undefined;
  switch (address.scheme) {
    case 'mqtt':
      return new MqttClient(() => net.connect({ host: address.host, port: address.port, noDelay: true }), rest);
    case 'mqtts':
      // tls.connect takes no `noDelay` option: set before it connects, it applies once it does.
      return new MqttClient(() => tls.connect({ ...secure, host: address.host, port: address.port }).setNoDelay(true), rest);
    case 'ws':
    case 'wss':
      // ws sets TCP_NODELAY on its socket itself; binary frames, no compression (MQTT packets are small).
      return new MqttClient(
        () => createWebSocketStream(new WebSocket(webSocketUrl(address), MQTT_WS_PROTOCOL, { ...secure, perMessageDeflate: false })),
        rest,
      );
  }
}

/**
 * A session of the product's own hot path (stations, the API's gateway): the lean client
 * (lean-client/client.ts), in memory or over the network. A fleet holds many of these in one thread, and
 * mqtt.js cost more per packet than the broker itself. Subscriptions are not renewed by the client
 * after a reconnect: the callers do it in their 'connect' handler, where they can wait for the SUBACK.
 * A `clientCert` given as a function is called as each connection opens, before it dials.
 */
export function createSession(transport: MqttTransport, options: LeanClientOptions & { clientCert?: ClientCertSource; sessionExpirySeconds?: number }): MqttSession {
  const { clientCert, sessionExpirySeconds: _onlyMqtt5, ...rest } = options;
  if (transport.kind === 'memory') return new LeanMqttClient(transport.broker, rest);
  if (transport.protocolVersion === 5) return new Mqtt5Session((mqttOptions) => createMqttClient(transport, mqttOptions), options);
  const address = parseBrokerUrl(transport.url);
  return new LeanMqttClient(leanTarget(address, transport.tls, clientCert), { ...rest, ...urlCredentials(address, rest) });
}

/**
 * The credentials of the broker URL (or STATION_SIM_BROKER_USERNAME and _PASSWORD, put into it by
 * the CLI), which replace the identity's user name, unless the identity has a password of its own
 * (a fixture's per-station passwords are not overridden by one URL for every party).
 */
function urlCredentials(address: BrokerAddress, identity: { password?: string | Buffer | undefined }): { username?: string; password?: string } {
  if (identity.password !== undefined || address.username === undefined) return {};
  return address.password === undefined ? { username: address.username } : { username: address.username, password: address.password };
}

function leanTarget(address: BrokerAddress, settings: BrokerTls | undefined, clientCert: ClientCertSource | undefined): LeanTarget {
  const { host, port } = address;
  let secure: TlsSource | undefined;
  if (isSecureScheme(address.scheme)) {
    secure = typeof clientCert === 'function' ? async () => tlsOptions(address, settings, await clientCert()) : tlsOptions(address, settings, clientCert);
  }
  switch (address.scheme) {
    case 'mqtt':
      return { kind: 'tcp', host, port };
    case 'mqtts':
      return { kind: 'tls', host, port, tls: secure! };
    case 'ws':
    case 'wss':
      return { kind: 'ws', url: webSocketUrl(address), ...(secure ? { tls: secure } : {}) };
  }
}

/** The broker as messages name it: its URL without credentials, or nothing for the in-process broker. */
export function brokerLabel(transport: MqttTransport): string | undefined {
  return transport.kind === 'tcp' ? redactUrl(transport.url) : undefined;
}

/** Verification errors of the broker's certificate that mean "signed by a CA we were not given" (OpenSSL's X509_V_ERR_*). */
const UNTRUSTED_CA = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
]);

/**
 * A TLS alert the broker sent about our client certificate (RFC 8446, section 6.2), as Node names
 * it: `ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE`, `ERR_SSL_TLSV1_ALERT_UNKNOWN_CA`,
 * `ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED` and so on. The alert's name is the reason.
 */
const CLIENT_CERT_ALERT = /^ERR_SSL_(?:SSLV3|TLSV1|TLSV13)_ALERT_(BAD_CERTIFICATE|UNSUPPORTED_CERTIFICATE|CERTIFICATE_REVOKED|CERTIFICATE_EXPIRED|CERTIFICATE_UNKNOWN|UNKNOWN_CA|CERTIFICATE_REQUIRED|ACCESS_DENIED)$/;

/** A certificate problem as one catalogue error, or undefined for any other error. */
function certificateError(error: Error & { code?: string | number }, where: string): SimError | undefined {
  const code = typeof error.code === 'string' ? error.code : '';
  const reason = error.message.replace(/\.$/, '');
  const options = { cause: error };
  if (UNTRUSTED_CA.has(code)) {
    return new SimError('BROKER_CERTIFICATE', `The MQTT broker${where} has a certificate this machine does not trust (${reason}): give its CA with --broker-ca`, options);
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    const when = code === 'CERT_HAS_EXPIRED' ? 'has expired' : 'is not valid yet';
    return new SimError('BROKER_CERTIFICATE', `The MQTT broker${where} has a certificate that ${when}: renew the broker's certificate (or check this machine's clock)`, options);
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return new SimError('BROKER_CERTIFICATE', `The MQTT broker${where} has a certificate for another host name (${reason}): connect by a name it carries, or give it with --broker-servername`, options);
  }
  if (code === 'CERT_REVOKED' || code === 'CERT_UNTRUSTED' || code === 'CERT_REJECTED' || code === 'CERT_SIGNATURE_FAILURE') {
    return new SimError('BROKER_CERTIFICATE', `The MQTT broker${where} has a certificate this machine does not accept (${reason})`, options);
  }
  const alert = CLIENT_CERT_ALERT.exec(code);
  if (alert) {
    const name = alert[1]!.toLowerCase().replaceAll('_', ' ');
    return new SimError('BROKER_REFUSED', `The MQTT broker${where} refused the client certificate (TLS alert: ${name})`, options);
  }
  return undefined;
}

/**
 * Why the broker would not have this connection, in a few words, or undefined when the failure is
 * not a refusal (the broker is unreachable, the connection reset): a refused CONNACK (MQTT 3.1.1,
 * section 3.2.2.3), the broker's TLS alert about the client certificate (revoked, expired, unknown
 * CA), a broker certificate this side does not accept, or another failed TLS handshake. For the
 * notices of `stations` (src/cli/broker-notices.ts); never holds a credential.
 */
export function refusalCause(error: Error & { code?: string | number }): string | undefined {
  if (typeof error.code === 'number') {
    // MQTT 5.0 reason codes (0x80 and up, section 3.2.2.2) are written in hex, as the standard does.
    const code = error.code >= 0x80 ? `reason code 0x${error.code.toString(16).toUpperCase()}` : String(error.code);
    return `${error.message.replace(/^Connection refused: /i, '').toLowerCase()} (CONNACK ${code})`;
  }
  const code = typeof error.code === 'string' ? error.code : '';
  const alert = CLIENT_CERT_ALERT.exec(code);
  if (alert) return `its client certificate was refused (TLS alert: ${alert[1]!.toLowerCase().replaceAll('_', ' ')})`;
  const certificate = certificateError(error, '');
  if (certificate) return `the TLS handshake failed: ${certificate.message.replace(/^The MQTT broker /, "the broker ")}`;
  if (code.startsWith('ERR_SSL_')) return `the TLS handshake failed (${code})`;
  return undefined;
}

/**
 * Turns a socket error, a TLS failure or a refused CONNACK into one catalogue error that names the
 * broker (without credentials). CONNACK return codes 4 and 5 are "bad user name or password" and
 * "not authorized" (MQTT 3.1.1, section 3.2.2.3). The error's message never holds a password: the
 * errors here come from sockets, TLS and CONNACKs, none of which carry it.
 */
export function connectError(error: Error & { code?: string | number }, brokerUrl?: string): SimError {
  if (error instanceof SimError) return error;
  const where = brokerUrl === undefined ? '' : ` at ${brokerUrl}`;
  const certificate = certificateError(error, where);
  if (certificate) return certificate;
  // MQTT 5.0 (3.2.2.2): 0x86 bad user name or password, 0x87 not authorized, 0x8A banned, 0x8C bad authentication method.
  if (error.code === 4 || error.code === 5 || error.code === 0x86 || error.code === 0x87 || error.code === 0x8a || error.code === 0x8c || /not authori[sz]ed|bad user ?name or password/i.test(error.message)) {
    const reason = error.message.replace(/^Connection refused: /i, '');
    // An MQTT 5 reason code (0x80 and up) is named as the standard writes it: what a broker's log and docs show.
    const code = typeof error.code === 'number' && error.code >= 0x80 ? ` (CONNACK reason code 0x${error.code.toString(16).toUpperCase()})` : '';
    return new SimError('BROKER_REFUSED', `The MQTT broker${where} refused the connection: ${reason}${code}`, { cause: error });
  }
  const reason = typeof error.code === 'string' ? error.code : error.message;
  return new SimError('BROKER_UNREACHABLE', `The MQTT broker${where} cannot be reached (${reason})`, { cause: error });
}

/**
 * Resolves on the client's first CONNACK; on a failure first, ends the client and rejects with
 * `connectError`. Errors after that are the caller's to handle (both clients reconnect by themselves).
 */
export function firstConnect(client: MqttSession, transport: MqttTransport): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (): void => {
      settled = true;
      client.off('connect', onConnect);
      client.off('error', onError);
      client.off('close', onClose);
    };
    const fail = (error: Error): void => {
      settle();
      client.end(true);
      reject(connectError(error, brokerLabel(transport)));
    };
    const onError = (error: Error): void => {
      if (!settled) fail(error);
    };
    const onConnect = (): void => {
      settle();
      resolve();
    };
    // A connection that closes before its CONNACK without an error of its own (a peer that drops
    // it after the TLS handshake, say) fails the start too, rather than leaving it waiting. Its
    // error, when one comes with the close, is the better reason: it is given a turn to arrive.
    const onClose = (): void => {
      setImmediate(() => {
        if (!settled) fail(new Error('the connection closed before the broker answered'));
      });
    };
    client.once('error', onError);
    client.once('connect', onConnect);
    client.once('close', onClose);
  });
}
