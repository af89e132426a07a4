/**
 * Where the simulator is, as the header and the info panel (`i`) say it: the `/v1` API, the
 * control plane, the MQTT broker with its kind (embedded or external, TLS or not) and the notices
 * of its start (a default port taken, a certificate not checked), which would otherwise be gone
 * from the screen once the dashboard takes it over.
 */

/** What the dashboard is told of where things are; `station-sim up` knows it all, `dashboard --url` asks health. */
export interface DashboardAddresses {
  /** Base URL of the `/v1` API (and of `/sim/v1`). */
  api: string;
  /** The control plane's base URL. @default `${api}/sim/v1` */
  control?: string;
  broker?: BrokerAddress;
}

export interface BrokerAddress {
  /** The MQTT URL the stations use, credentials redacted. */
  url: string;
  embedded: boolean;
  /** Other listeners of the embedded broker: `TLS mqtts://…`, `WebSocket wss://…`. */
  listeners?: readonly string[];
  /** The embedded broker asks every client for credentials. */
  auth?: boolean;
}

/**
 * `embedded`, `external, TLS`, `embedded, auth, +TLS`: what kind of broker it is; `+TLS` and
 * `+WebSocket` for listeners of the embedded broker beside the plain one (`i` has their URLs).
 */
export function brokerMode(broker: BrokerAddress): string {
  const tls = /^(mqtts|wss):/i.test(broker.url);
  const also = (broker.listeners ?? []).map((listener) => `+${listener.split(' ')[0]}`);
  return [broker.embedded ? 'embedded' : 'external', ...(tls ? ['TLS'] : []), ...(broker.auth ? ['auth'] : []), ...also].join(', ');
}

/** One piece of the address line, by how much it matters at 80 columns. */
export interface AddressPiece {
  label: string;
  value: string;
}

/** The pieces of the header's address line, most wanted first: MQTT (for `mosquitto_sub`), the API, the control plane. */
export function addressPieces(addresses: DashboardAddresses): AddressPiece[] {
  const pieces: AddressPiece[] = [];
  if (addresses.broker) pieces.push({ label: 'MQTT', value: `${addresses.broker.url} (${brokerMode(addresses.broker)})` });
  pieces.push({ label: 'API', value: addresses.api });
  pieces.push({ label: 'control', value: addresses.control ?? `${addresses.api.replace(/\/+$/, '')}/sim/v1` });
  return pieces;
}
