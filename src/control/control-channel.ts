/**
 * The control plane's MQTT session: it sends control requests to whichever fleet process hosts a
 * station and waits for the answer, asks every fleet process for snapshots (or a reset), and
 * listens to the contract topics and simulator events for the event stream.
 */
import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import type { Fixture } from '../fixture/fixture-schema.js';
import { createMqttClient, firstConnect, type BrokerTap, type MqttTransport } from '../mqtt/transport.js';
import { SIM_TOPICS, groupTopics, type ControlReply, type ControlRequest, type FleetReply } from '../mqtt/topics.js';
import type { StationSnapshot } from '../station/station-model.js';
import { SimError } from '../errors.js';

/** A control request without its id: the channel adds one. */
export type ControlAction = ControlRequest extends infer R ? (R extends unknown ? Omit<R, 'requestId'> : never) : never;

export interface ControlChannelOptions {
  transport: MqttTransport;
  fixture: Fixture;
  /**
   * How long a control request waits for the station's process to answer; for a fleet request,
   * how long it waits for the next answer (fleet processes answer a chunk of stations at a time).
   * @default 5000
   */
  timeoutMs?: number;
  /**
   * Every message on the contract topics and simulator events. Given up front because the
   * retained state arrives right after the subscription is acknowledged.
   */
  onMessage: MessageListener;
  /**
   * Listen to the contract topics on the broker itself rather than through this channel's MQTT
   * session. With the embedded broker this spares every station message a second encode, delivery
   * and parse (about a sixth of the CPU of an unlock, bench/README.md); control requests and their
   * replies still travel over MQTT. @default the MQTT session
   */
  tap?: BrokerTap;
}

type MessageListener = (topic: string, payload: Buffer) => void;

export class ControlChannel {
  readonly #client: MqttClient;
  readonly #fixture: Fixture;
  readonly #timeoutMs: number;
  readonly #pending = new Map<string, (reply: ControlReply | FleetReply) => void>();
  readonly #onMessage: MessageListener;
  #untap: (() => Promise<void>) | undefined;

  private constructor(client: MqttClient, options: ControlChannelOptions) {
    this.#client = client;
    this.#fixture = options.fixture;
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#onMessage = options.onMessage;
    const replyPrefix = SIM_TOPICS.reply('');
    client.on('message', (topic, payload) => {
      if (topic.startsWith(replyPrefix)) {
        const waiter = this.#pending.get(topic.slice(replyPrefix.length));
        if (!waiter) return;
        try {
          waiter(JSON.parse(payload.toString()) as ControlReply | FleetReply);
        } catch {
          // A reply we cannot read is as good as none: the request times out.
        }
        return;
      }
      this.#onMessage(topic, payload);
    });
  }

  static async start(options: ControlChannelOptions): Promise<ControlChannel> {
    const client = createMqttClient(options.transport, {
      clientId: `station-sim-control-${randomUUID().slice(0, 8)}`,
      clean: true,
      reconnectPeriod: 1000,
    });
    await firstConnect(client, options.transport);
    client.on('error', () => undefined); // mqtt.js reconnects on its own after the first connection
    const channel = new ControlChannel(client, options);
    // Replies at QoS 1: a control request waits for one. What feeds the event stream at QoS 0: it
    // watches the traffic, and a QoS 1 copy of every message would double the broker's work.
    const watched = new Set<string>([SIM_TOPICS.eventsFilter]);
    for (const topics of groupTopics(options.fixture.stations).distinct) {
      for (const kind of ['status', 'lockState', 'unlock', 'acks'] as const) watched.add(topics.filter(kind));
    }
    const subscriptions: Record<string, { qos: 0 | 1 }> = { [SIM_TOPICS.reply('+')]: { qos: 1 } };
    if (options.tap) channel.#untap = await options.tap([...watched], options.onMessage);
    else for (const filter of watched) subscriptions[filter] = { qos: 0 };
    await client.subscribeAsync(subscriptions);
    return channel;
  }

  /** Sends one control action to the station's process and returns its answer. */
  async control(token: string, action: ControlAction): Promise<ControlReply & { ok: true }> {
    if (!this.#fixture.stations.some((station) => station.token === token)) throw new SimError('STATION_NOT_FOUND');
    const requestId = randomUUID();
    const reply = await new Promise<ControlReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(requestId);
        reject(new SimError('STATION_NO_RESPONSE'));
      }, this.#timeoutMs);
      this.#pending.set(requestId, (answer) => {
        clearTimeout(timer);
        this.#pending.delete(requestId);
        resolve(answer as ControlReply);
      });
      this.#client.publish(SIM_TOPICS.control(token), JSON.stringify({ ...action, requestId }), { qos: 1 });
    });
    if (!reply.ok) throw new SimError(reply.code, reply.message);
    return reply;
  }

  /**
   * Asks every fleet process for its stations (and, with `reset`, to reset them first). Collects
   * answers until every fixture station is accounted for, or until no answer has come for the
   * timeout: each process answers a chunk of stations at a time (fleet-agent.ts), so a reset of a
   * large fleet that keeps making progress is waited for, and stations whose process does not
   * answer are simply missing from the result.
   */
  async fleet(action: 'query' | 'reset'): Promise<StationSnapshot[]> {
    const requestId = randomUUID();
    const expected = this.#fixture.stations.length;
    const found = new Map<string, StationSnapshot>();
    await new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#pending.delete(requestId);
        resolve();
      };
      let timer = setTimeout(finish, this.#timeoutMs);
      this.#pending.set(requestId, (answer) => {
        for (const station of (answer as FleetReply).stations ?? []) found.set(station.token, station);
        if (found.size >= expected) {
          finish();
          return;
        }
        clearTimeout(timer);
        timer = setTimeout(finish, this.#timeoutMs);
      });
      this.#client.publish(SIM_TOPICS.fleet, JSON.stringify({ requestId, action }), { qos: 1 });
    });
    const order = new Map(this.#fixture.stations.map((station, index) => [station.token, index]));
    return [...found.values()].sort((a, b) => (order.get(a.token) ?? 0) - (order.get(b.token) ?? 0));
  }

  async stop(): Promise<void> {
    await this.#untap?.();
    await this.#client.endAsync();
  }
}
