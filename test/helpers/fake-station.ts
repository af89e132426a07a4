/**
 * A tiny stand-in for station firmware, written against the topic contract (DESIGN.md): it
 * publishes retained status and lock state, answers unlock commands with an ack, then publishes
 * `unlocked` after `unlockDelayMs` and `locked` after `relockMs`. Deliberately independent of the
 * real firmware model in src/station, so these tests pin the contract, not one implementation.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { CONTRACT_QOS, DEFAULT_TOPICS, StationTopics, encodePayload, parsePayload } from '../../src/contract/topics.js';
import { type UnlockCommand } from '../../src/contract/payloads.js';
import type { Topics } from '../../src/contract/topics.js';
import type { LockStatus } from '../../src/contract/statuses.js';

export interface FakeStationOptions {
  url: string;
  token: string;
  stationId: number;
  locks: Record<string, LockStatus>;
  batteryVoltage?: number;
  /** `accept`: ack accepted; `reject`: ack with `rejectReason`; `silent`: never ack. @default "accept" */
  mode?: 'accept' | 'reject' | 'silent';
  rejectReason?: string;
  /** @default 20 */
  unlockDelayMs?: number;
  /** @default 100 */
  relockMs?: number;
  topics?: Topics;
  /** Publish status `online` at start. @default true */
  online?: boolean;
}

export interface FakeStation {
  readonly commands: UnlockCommand[];
  readonly topics: StationTopics;
  readonly client: MqttClient;
  options: FakeStationOptions;
  publishStatus(status: 'online' | 'offline'): Promise<void>;
  publishLock(lockId: string, status: LockStatus): Promise<void>;
  /** Publishes a raw ack, as a misbehaving or foreign client might. */
  publishAck(payload: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startFakeStation(options: FakeStationOptions): Promise<FakeStation> {
  const topics = new StationTopics(options.topics ?? DEFAULT_TOPICS);
  const token = options.token;
  const client = await mqtt.connectAsync(options.url, { clientId: `fake-${token}-${Math.random().toString(16).slice(2)}`, reconnectPeriod: 0 });
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, run: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };
  const commands: UnlockCommand[] = [];
  const publishLock = async (lockId: string, status: LockStatus): Promise<void> => {
    await client.publishAsync(topics.topic('lockState', { token, lockId }), encodePayload('lockState', { lockId, status, lastUpdated: new Date().toISOString() }), {
      qos: CONTRACT_QOS,
      retain: true,
    });
  };
  const publishStatus = async (status: 'online' | 'offline'): Promise<void> => {
    await client.publishAsync(
      topics.topic('status', { token }),
      encodePayload('status', { stationId: options.stationId, status, batteryVoltage: options.batteryVoltage ?? 12.5, lastConnection: new Date().toISOString() }),
      { qos: CONTRACT_QOS, retain: true },
    );
  };

  client.on('message', (topic, payload) => {
    const address = topics.match('unlock', topic);
    const command = parsePayload('unlock', payload);
    if (!address?.lockId || !command) return;
    const lockId = address.lockId;
    commands.push(command);
    const mode = station.options.mode ?? 'accept';
    if (mode === 'silent') return;
    const ack = (accepted: boolean): void => {
      const body = accepted
        ? { commandId: command.commandId, lockId, accepted: true as const }
        : { commandId: command.commandId, lockId, accepted: false as const, reason: station.options.rejectReason ?? 'jammed' };
      client.publish(topics.topic('acks', { token }), encodePayload('acks', body), { qos: CONTRACT_QOS });
    };
    if (mode === 'reject') {
      ack(false);
      return;
    }
    ack(true);
    later(station.options.unlockDelayMs ?? 20, () => {
      void publishLock(lockId, 'unlocked');
      later(station.options.relockMs ?? 100, () => void publishLock(lockId, 'locked'));
    });
  });
  await client.subscribeAsync(topics.filter('unlock', { token }), { qos: CONTRACT_QOS });
  for (const [lockId, status] of Object.entries(options.locks)) await publishLock(lockId, status);
  if (options.online ?? true) await publishStatus('online');

  const station: FakeStation = {
    commands,
    topics,
    client,
    options,
    publishStatus,
    publishLock,
    publishAck: async (payload) => {
      await client.publishAsync(topics.topic('acks', { token }), payload, { qos: CONTRACT_QOS });
    },
    stop: async () => {
      for (const timer of timers) clearTimeout(timer);
      await client.endAsync();
    },
  };
  return station;
}
