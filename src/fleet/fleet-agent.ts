/**
 * The fleet's end of the control plane: one MQTT client per fleet process that receives control
 * requests for the stations this process hosts, applies them, and answers. Because it goes through
 * the broker, the control plane works the same whether the fleet runs in its own process, in
 * another one, or split over several (docs/control-plane.md, "MQTT control topics").
 */
import { randomUUID } from 'node:crypto';
import { resolveLink } from '../fixture/link-schema.js';
import type { MqttClient } from 'mqtt';
import { createMqttClient, firstConnect, type MqttTransport } from '../mqtt/transport.js';
import { endWithin } from '../mqtt/end-within.js';
import type { SharedIdentity } from '../mqtt/identity.js';
import { parseSimMessage, type ControlReply, type ControlRequest, type FleetReply, type SimEvent } from '../control/control-protocol.js';
import { SIM_NAMESPACE, SIM_TOPICS } from '../contract/sim-topics.js';
import type { StationClient } from '../mqtt/station-client.js';
import type { Fault } from '../contract/fault-schema.js';
import type { StationSnapshot } from '../station/station-model.js';

export interface FleetAgentOptions {
  transport: MqttTransport;
  /**
   * Who the agent is on the broker: the control identity (docs/mqtt-security.md).
   * @default client id `station-sim-agent-<uuid>`, no credentials of its own
   */
  identity?: SharedIdentity;
  stations: ReadonlyMap<string, StationClient>;
  /** Told each message on a filter given to `watch` (a station's command topics, for the judge). */
  onWatched?: (topic: string, payload: Buffer, qos: 0 | 1 | 2) => void;
}

export interface StartedFleetAgent {
  /** Publishes a simulator event (a fault fired, a lock's phase) for the event stream. */
  publishEvent(token: string, event: SimEvent): void;
  /**
   * True while some control plane has a listener of its whole event stream (SIM_TOPICS.listener):
   * the only reader of lock phases, so stations report none otherwise.
   */
  readonly phasesWanted: boolean;
  /**
   * The retained messages the broker holds on `filters`, read with a fresh subscription (a broker
   * sets the retain flag only on what a new subscription gets: MQTT 3.1.1, 3.3.1.3). Complete once
   * a marker published after the SUBSCRIBE comes back, or after `timeoutMs`; empty messages (a
   * retained message cleared) are left out.
   */
  readRetained(filters: readonly string[], timeoutMs?: number): Promise<{ topic: string; payload: Buffer }[]>;
  /**
   * Subscribes to `filter` (QoS 1, so a message's own QoS shows) until `unwatch`; its messages go
   * to `onWatched`. The agent's session is clean: it subscribes to every watched filter again on each reconnect.
   */
  watch(filter: string): void;
  unwatch(filter: string): void;
  stop(): Promise<void>;
}

/** What `StartedFleetAgent.readRetained` does, on the agent's client. */
async function readRetained(client: MqttClient, filters: readonly string[], timeoutMs: number): Promise<{ topic: string; payload: Buffer }[]> {
  if (filters.length === 0 || !client.connected) return [];
  const marker = SIM_TOPICS.reply(`retained-${randomUUID()}`);
  const found: { topic: string; payload: Buffer }[] = [];
  let markerBack: () => void = () => undefined;
  const back = new Promise<void>((resolve) => (markerBack = resolve));
  const onMessage = (topic: string, payload: Buffer, packet: { retain?: boolean }): void => {
    if (topic === marker) markerBack();
    // Only a subscription made now delivers with the flag (the agent's others are from its start);
    // the caller routes each topic by its own templates.
    else if (packet.retain && payload.length > 0) found.push({ topic, payload });
  };
  client.on('message', onMessage);
  let timer: NodeJS.Timeout | undefined;
  try {
    await client.subscribeAsync([...filters, marker], { qos: 1 });
    // The broker answers a client's packets in order: the retained messages of the SUBSCRIBE
    // are sent before the marker published after it comes back.
    await client.publishAsync(marker, 'retained-read', { qos: 1 });
    await Promise.race([back, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    await client.unsubscribeAsync([...filters, marker]).catch(() => undefined);
  } finally {
    if (timer) clearTimeout(timer);
    client.off('message', onMessage);
  }
  return found;
}

export async function startFleetAgent(options: FleetAgentOptions): Promise<StartedFleetAgent> {
  const client: MqttClient = createMqttClient(options.transport, {
    ...(options.identity ?? { clientId: `station-sim-agent-${randomUUID()}` }),
    clean: true,
    reconnectPeriod: 1000,
  });
  await firstConnect(client, options.transport);
  client.on('error', () => undefined); // mqtt.js reconnects; errors after start are not fatal here
  // Control planes with a listener, by their flag's topic. Forgotten with the session: the broker
  // sends the flags again, retained, when the subscription is renewed.
  const listeners = new Set<string>();
  client.on('close', () => listeners.clear());
  const listenerPrefix = SIM_TOPICS.listener('');
  const reply = (requestId: string, body: ControlReply | FleetReply): void => {
    // A reply that cannot be published (the request's own fault) must not take the fleet down.
    try {
      client.publish(SIM_TOPICS.reply(requestId), JSON.stringify(body), { qos: 1 });
    } catch {
      // nothing to answer on
    }
  };

  // Filters watched for `onWatched`, renewed on every reconnect (the agent's session is clean).
  const watched = new Set<string>();
  client.on('connect', () => {
    if (watched.size > 0) client.subscribe([...watched], { qos: 1 });
  });
  const controlPrefix = SIM_TOPICS.control('');
  const simPrefix = `${SIM_NAMESPACE}/`;
  client.on('message', (topic, payload, packet) => {
    if (!topic.startsWith(simPrefix)) {
      // A retained copy is what a subscription is handed (readRetained's, or a watch's first), not a publish now.
      if (!packet.retain) options.onWatched?.(topic, payload, packet.qos);
      return;
    }
    if (topic.startsWith(listenerPrefix)) {
      if (payload.length > 0) listeners.add(topic);
      else listeners.delete(topic);
      return;
    }
    if (topic === SIM_TOPICS.fleet) {
      const request = parseSimMessage('fleet', payload);
      if (!request) return;
      void handleFleet(request.action, options.stations, (part) => reply(request.requestId, { requestId: request.requestId, ...part })).catch(
        () => undefined, // nothing left to answer with (a failed reset is answered as missing, in handleFleet)
      );
      return;
    }
    if (!topic.startsWith(controlPrefix)) return;
    const token = topic.slice(controlPrefix.length);
    const station = options.stations.get(token);
    const request = parseSimMessage('control', payload);
    // Another process may host this station; only the one that has it answers.
    if (!station || !request) return;
    void handleControl(station, request).then(
      (answer) => reply(request.requestId, answer),
      (error: Error) => reply(request.requestId, { requestId: request.requestId, ok: false, code: 'BAD_REQUEST', message: error.message }),
    );
  });
  try {
    await client.subscribeAsync([SIM_TOPICS.controlFilter, SIM_TOPICS.fleet, SIM_TOPICS.listenersFilter], { qos: 1 });
  } catch (error) {
    // Connected but not subscribed: the client would reconnect forever with no one to stop it.
    await client.endAsync(true);
    throw error;
  }

  return {
    get phasesWanted() {
      return listeners.size > 0;
    },
    publishEvent: (token, event) => {
      // A finding of the judge is evidence for `/sim/v1/judge` and must not be lost on the way: QoS 1.
      const qos = 'type' in event && event.type === 'judge.finding' ? 1 : 0;
      client.publish(SIM_TOPICS.events(token), JSON.stringify(event), { qos });
    },
    readRetained: (filters, timeoutMs = 2000) => readRetained(client, filters, timeoutMs),
    watch: (filter) => {
      if (watched.has(filter)) return;
      watched.add(filter);
      if (client.connected) client.subscribe(filter, { qos: 1 });
    },
    unwatch: (filter) => {
      if (!watched.delete(filter)) return;
      if (client.connected) client.unsubscribe(filter);
    },
    stop: async () => {
      // Without the broker, a polite end would wait forever for the replies queued meanwhile,
      // and a silent one never closes: bounded (end-within.ts).
      await endWithin(client);
    },
  };
}

/**
 * Stations reset (or read) at a time. Each chunk is answered as it is done, in replies of at most
 * FLEET_REPLY_MAX_BYTES each (a snapshot is a few hundred bytes, so a process of 100,000 stations
 * would otherwise send one message of tens of MB), and a long reset shows progress: the control
 * plane waits as long as answers keep coming.
 */
export const FLEET_REPLY_CHUNK = 1000;

/**
 * Answers a fleet request one chunk of stations at a time, each chunk reset first for `reset`.
 * Every chunk is answered: a station whose reset failed is left out of its chunk's answer, so the
 * control plane counts it as `missing` (not reset) instead of one failure silencing the whole
 * chunk and the shard showing as missing.
 */
async function handleFleet(
  action: 'query' | 'reset',
  stations: ReadonlyMap<string, StationClient>,
  answer: (part: { stations: StationSnapshot[] } | { tokens: string[] }) => void,
): Promise<void> {
  const all = [...stations.values()];
  if (all.length === 0) {
    answer(action === 'reset' ? { tokens: [] } : { stations: [] });
    return;
  }
  // A reset's first chunk is answered only after what its resets publish has gone through the
  // broker, which for a large fleet can take longer than the control plane waits between answers
  // (5 s): an empty answer at once says the request arrived and is being worked on.
  if (action === 'reset') answer({ tokens: [] });
  for (let start = 0; start < all.length; start += FLEET_REPLY_CHUNK) {
    const chunk = all.slice(start, start + FLEET_REPLY_CHUNK);
    if (action === 'reset') {
      const results = await Promise.allSettled(chunk.map((station) => station.reset()));
      const reset = chunk.filter((_, index) => results[index]!.status === 'fulfilled');
      for (const tokens of bySize(reset.map((station) => station.token))) answer({ tokens });
      continue;
    }
    for (const part of bySize(chunk.map((station) => station.snapshot()))) answer({ stations: part });
  }
}

/**
 * The encoded size a fleet reply stays under: brokers limit packets (Mosquitto's
 * `max_packet_size 65536` in docs/mosquitto/station-sim.conf, the embedded broker's 64 KiB
 * default), and a reply over the limit would close the agent's connection instead of arriving.
 */
export const FLEET_REPLY_MAX_BYTES = 48 * 1024;

/** `items` cut into runs whose JSON stays under FLEET_REPLY_MAX_BYTES (a run holds one item at least). */
function bySize<T>(items: T[]): T[][] {
  const parts: T[][] = [];
  let part: T[] = [];
  let bytes = 0;
  for (const snapshot of items) {
    const size = Buffer.byteLength(JSON.stringify(snapshot)) + 1;
    if (part.length > 0 && bytes + size > FLEET_REPLY_MAX_BYTES) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(snapshot);
    bytes += size;
  }
  parts.push(part);
  return parts;
}

async function handleControl(station: StationClient, request: ControlRequest): Promise<ControlReply> {
  const { requestId } = request;
  const ok = (fault?: Fault): ControlReply => ({ requestId, ok: true, station: station.snapshot(), ...(fault ? { fault } : {}) });
  switch (request.action) {
    case 'connection':
      if (request.online) await station.goOnline();
      else await station.goOffline();
      return ok();
    case 'battery':
      station.model.setBattery(request.voltage);
      return ok();
    case 'reboot':
      await station.reboot(request.downMs);
      return ok();
    case 'physical':
      if (!station.model.physical(request.lockId, request.physical)) {
        return { requestId, ok: false, code: 'LOCK_NOT_FOUND', message: 'Lock not found' };
      }
      return ok();
    case 'addFault': {
      const lockId = request.fault.lockId;
      if (lockId !== undefined && !station.model.lockPayload(lockId)) {
        return { requestId, ok: false, code: 'LOCK_NOT_FOUND', message: 'Lock not found' };
      }
      return ok(station.model.addFault(request.fault));
    }
    case 'removeFault':
      if (!station.model.removeFault(request.faultId)) return { requestId, ok: false, code: 'FAULT_NOT_FOUND', message: 'Fault not found' };
      return ok();
    case 'clearFaults':
      station.model.clearFaults();
      return ok();
    case 'link':
      if (!station.link) {
        return {
          requestId,
          ok: false,
          code: 'BAD_REQUEST',
          message: `station ${station.model.config.token} has no link of its own to change: give it one in the fixture ("link": "perfect" starts it perfect), docs/links.md`,
        };
      }
      station.link.set(resolveLink(request.link));
      return ok();
    case 'snapshot':
      return ok();
  }
}
