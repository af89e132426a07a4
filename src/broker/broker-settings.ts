/**
 * The embedded broker's settings for a fixture and the command line (docs/mqtt-security.md, "The
 * embedded broker, secured"), and Mosquitto 2's rule: bound beyond loopback without
 * authentication, the broker does not start unless the user says `--insecure-broker`.
 */
import path from 'node:path';
import { SimError } from '../errors.js';
import type { Fixture } from '../fixture/fixture-schema.js';
import { isLoopbackHost } from '../shared/listen.js';
import { brokerSecurity } from './broker-security.js';
import type { EmbeddedBrokerOptions } from './embedded-broker.js';

export interface BrokerSettingsInput {
  host: string;
  /** Require authentication whatever the fixture says (`--broker-auth`). */
  auth?: boolean;
  /** Run open beyond loopback (`--insecure-broker`). */
  insecure?: boolean;
  /** Override the fixture's `mqtt.broker.tlsPort` / `wsPort`. */
  tlsPort?: number;
  wsPort?: number;
}

type Settings = Pick<EmbeddedBrokerOptions, 'security' | 'certs' | 'tlsPort' | 'wsPort' | 'maxPacketBytes'>;

/**
 * The broker options `fixture` and `input` ask for, and the one warning line to print when it runs
 * open beyond loopback. Throws BAD_REQUEST when it would run open beyond loopback unasked.
 */
export function embeddedBrokerSettings(fixture: Pick<Fixture, 'source' | 'stations' | 'mqtt'>, input: BrokerSettingsInput): { settings: Settings; warning?: string } {
  const security = brokerSecurity(fixture, input.auth ? { auth: true } : {});
  const mqtt = fixture.mqtt ?? {};
  const tlsPort = input.tlsPort ?? mqtt.broker?.tlsPort;
  const wsPort = input.wsPort ?? mqtt.broker?.wsPort;
  const certs = mqtt.certs === undefined ? undefined : path.resolve(security.baseDir, mqtt.certs);
  const settings: Settings = {
    security,
    ...(certs === undefined ? {} : { certs }),
    ...(tlsPort === undefined ? {} : { tlsPort }),
    ...(wsPort === undefined ? {} : { wsPort }),
    ...(mqtt.broker?.maxPacketBytes === undefined ? {} : { maxPacketBytes: mqtt.broker.maxPacketBytes }),
  };
  if (security.auth || isLoopbackHost(input.host)) return { settings };
  if (!input.insecure) {
    throw new SimError(
      'BAD_REQUEST',
      `host "${input.host}" lets other machines reach the embedded MQTT broker, where anyone could open any lock: give the fixture mqtt identities (or --broker-auth), or add --insecure-broker to leave it open`,
    );
  }
  return { settings, warning: `the embedded MQTT broker on ${input.host} takes anyone who reaches it, without authentication (--insecure-broker): anyone there can open any lock` };
}
