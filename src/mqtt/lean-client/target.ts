/** Where a lean client connects, and with what TLS options. */
import type tls from 'node:tls';
import type { StreamAcceptor } from '../broker-link.js';

/**
 * The options of a TLS connection (CA, client certificate, server name), or a function that makes
 * them as each connection opens: a station reads its certificate and key then, instead of holding
 * them between connections.
 */
export type TlsSource = tls.ConnectionOptions | (() => Promise<tls.ConnectionOptions>);

/**
 * Where a lean client connects: into a broker in this process, or to a broker over TCP, TLS, or a
 * WebSocket (`url` is `ws://` or `wss://`, with `tls` for the latter).
 */
export type LeanTarget =
  | { kind: 'memory'; broker: StreamAcceptor }
  | { kind: 'tcp'; host: string; port: number }
  | { kind: 'tls'; host: string; port: number; tls: TlsSource }
  | { kind: 'ws'; url: string; tls?: TlsSource };
