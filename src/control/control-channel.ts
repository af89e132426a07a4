/**
 * The control plane's MQTT session: it sends control requests to whichever fleet process hosts a
 * station and waits for the answer, asks every fleet process for snapshots (or a reset), and
 * listens to the contract topics and simulator events for the event stream.
 */
import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import type { Fixture } from '../fixture/fixture-schema.js';
import { createMqttClient, firstConnect, type MqttTransport } from '../mqtt/transport.js';
import { endWithin, lingerAtMost } from '../mqtt/end-within.js';
import type { SharedIdentity } from '../mqtt/identity.js';
import type { BrokerTap } from '../mqtt/broker-link.js';
import { groupTopics } from '../contract/topics.js';
import { type ControlReply, type ControlRequest, type FleetReply } from './control-protocol.js';
import { SIM_TOPICS } from '../contract/sim-topics.js';
import type { StationSnapshot } from '../station/station-model.js';
import { SimError } from '../errors.js';

/** A control request without its id: the channel adds one. */
export type ControlAction = ControlRequest extends infer R ? (R extends unknown ? Omit<R, 'requestId'> : never) : never;

export interface ControlChannelOptions {
  transport: MqttTransport;
  /**
   * Who the control plane is on the broker (docs/mqtt-security.md).
   * @default client id `station-sim-control-<8 random hex digits>`, no credentials of its own
   */
  identity?: SharedIdentity;
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
  /** Delay between reconnect attempts after the session is lost. @default 1000 */
  reconnectMs?: number;
}

type MessageListener = (topic: string, payload: Buffer) => void;

/** A change of the channel's broker connection: lost (`up: false`) or back (`up: true`). */
export type ConnectionListener = (up: boolean) => void;

export class ControlChannel {
  readonly #client: MqttClient;
  readonly #fixture: Fixture;
  readonly #timeoutMs: number;
  /** Requests waiting for replies, by request id: `settle` takes a reply, `cancel` ends the wait when the channel stops. */
  readonly #pending = new Map<string, { settle: (reply: ControlReply | FleetReply) => void; cancel: (reason: Error) => void }>();
  #stopped = false;
  readonly #onMessage: MessageListener;
  #untap: (() => Promise<void>) | undefined;
  readonly #connectionListeners = new Set<ConnectionListener>();
  /** The connection as listeners were last told: up since the start, until a 'close'. */
  #up = true;
  /** What the fleets were last told of this control plane's event stream (`announceListening`). */
  #listening = false;
  readonly #listenerTopic: string;

  private constructor(client: MqttClient, options: ControlChannelOptions) {
    this.#client = client;
    this.#fixture = options.fixture;
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#onMessage = options.onMessage;
    this.#listenerTopic = SIM_TOPICS.listener(client.options.clientId ?? 'control');
    // Back after a lost session: a broker that restarted empty has forgotten the flag.
    client.on('connect', () => {
      if (this.#listening) this.#publishListening();
    });
    // mqtt.js says 'close' after every failed reconnect too, and 'connect' after each success:
    // listeners hear each change once.
    client.on('close', () => this.#connectionChanged(false));
    client.on('connect', () => this.#connectionChanged(true));
    const replyPrefix = SIM_TOPICS.reply('');
    client.on('message', (topic, payload) => {
      if (topic.startsWith(replyPrefix)) {
        const waiter = this.#pending.get(topic.slice(replyPrefix.length))?.settle;
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
    const identity = options.identity ?? { clientId: `station-sim-control-${randomUUID().slice(0, 8)}` };
    const client = createMqttClient(options.transport, {
      ...identity,
      // A control plane that dies with listeners leaves no fleet reporting lock phases for nobody.
      will: { topic: SIM_TOPICS.listener(identity.clientId), payload: Buffer.alloc(0), qos: 1, retain: true },
      clean: true,
      reconnectPeriod: options.reconnectMs ?? 1000,
      // Requests go out at QoS 0 and are never queued (see `#send`): a publication while the
      // session is down fails at once instead of waiting in mqtt.js for the next connection.
      queueQoSZero: false,
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

  /**
   * Sends one control action to the station's process and returns its answer. Refused at once
   * with `BROKER_DISCONNECTED` (503) while the session is down; `STATION_NO_RESPONSE` (504) when
   * no answer comes in time. Either way the request is never delivered later (see `#send`).
   */
  async control(token: string, action: ControlAction): Promise<ControlReply & { ok: true }> {
    if (!this.#fixture.stations.some((station) => station.token === token)) throw new SimError('STATION_NOT_FOUND');
    if (this.#stopped) throw new Error('the control channel has stopped');
    if (!this.#client.connected) throw new SimError('BROKER_DISCONNECTED');
    const requestId = randomUUID();
    const reply = await new Promise<ControlReply>((resolve, reject) => {
      const end = (): void => {
        clearTimeout(timer);
        this.#pending.delete(requestId);
      };
      const timer = setTimeout(() => {
        end();
        reject(new SimError('STATION_NO_RESPONSE'));
      }, this.#timeoutMs);
      this.#pending.set(requestId, {
        settle: (answer) => {
          end();
          resolve(answer as ControlReply);
        },
        cancel: (reason) => {
          end();
          reject(reason);
        },
      });
      this.#send(SIM_TOPICS.control(token), JSON.stringify({ ...action, requestId }), requestId);
    });
    if (!reply.ok) throw new SimError(reply.code, reply.message);
    return reply;
  }

  /**
   * Asks every fleet process for its stations (and, with `reset`, to reset them first). Collects
   * answers until every fixture station is accounted for, or until no answer has come for the
   * timeout: each process answers a chunk of stations at a time (fleet-agent.ts), so a reset of a
   * large fleet that keeps making progress is waited for, and stations whose process does not
   * answer are simply missing from the result. When no process answers at all, it throws
   * `STATION_NO_RESPONSE` (504); while the session is down, `BROKER_DISCONNECTED` (503) at once.
   */
  fleet(action: 'query'): Promise<StationSnapshot[]>;
  /** A reset answers with the tokens of the stations reset, in fixture order. */
  fleet(action: 'reset'): Promise<string[]>;
  async fleet(action: 'query' | 'reset'): Promise<StationSnapshot[] | string[]> {
    if (this.#stopped) throw new Error('the control channel has stopped');
    if (!this.#client.connected) throw new SimError('BROKER_DISCONNECTED');
    const requestId = randomUUID();
    const expected = this.#fixture.stations.length;
    if (expected === 0) return [];
    const found = new Map<string, StationSnapshot | undefined>();
    let replies = 0;
    await new Promise<void>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#pending.delete(requestId);
        resolve();
      };
      let timer = setTimeout(finish, this.#timeoutMs);
      this.#pending.set(requestId, {
        settle: (answer) => {
          replies += 1;
          for (const station of (answer as FleetReply).stations ?? []) found.set(station.token, station);
          for (const token of (answer as FleetReply).tokens ?? []) found.set(token, undefined);
          if (found.size >= expected) {
            finish();
            return;
          }
          clearTimeout(timer);
          timer = setTimeout(finish, this.#timeoutMs);
        },
        cancel: (reason) => {
          clearTimeout(timer);
          this.#pending.delete(requestId);
          reject(reason);
        },
      });
      this.#send(SIM_TOPICS.fleet, JSON.stringify({ requestId, action }), requestId);
    });
    // Not one fleet process answered (none running, or the broker is gone): an empty fleet would be a lie.
    if (replies === 0) throw new SimError('STATION_NO_RESPONSE', 'No fleet process answered');
    const order = new Map(this.#fixture.stations.map((station, index) => [station.token, index]));
    const tokens = [...found.keys()].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
    return action === 'reset' ? tokens : tokens.map((token) => found.get(token)!);
  }

  /**
   * Publishes a request at QoS 0, on a client that does not queue QoS 0 (`queueQoSZero: false`).
   * At QoS 1, mqtt.js keeps every publication without a PUBACK and sends it again after a
   * reconnect, so a request made while the broker was away (or whose PUBACK was lost with the
   * connection) ran a second or so after the broker came back, long after its caller was told
   * 504: a station went offline, or a lock jammed, out of the blue. At QoS 0 a request is sent on
   * the live connection or not at all; one lost on the way is a 504 like any other unanswered
   * one. A publication that fails (the session went down in between) ends the wait at once.
   */
  #send(topic: string, payload: string, requestId: string): void {
    this.#client.publish(topic, payload, { qos: 0 }, (error) => {
      if (error) this.#pending.get(requestId)?.cancel(new SimError('BROKER_DISCONNECTED'));
    });
  }

  /**
   * Tells every fleet process whether somebody listens to this control plane's whole event stream
   * (SIM_TOPICS.listener): they report lock phases only then. Retained, so a fleet that starts later
   * learns it too; cleared at stop and by the session's will.
   */
  announceListening(listening: boolean): void {
    if (listening === this.#listening || this.#stopped) return;
    this.#listening = listening;
    this.#publishListening();
  }

  #publishListening(): void {
    if (!this.#client.connected) return;
    this.#client.publish(this.#listenerTopic, this.#listening ? '1' : '', { qos: 1, retain: true }, () => undefined);
  }

  /** True while the channel's MQTT session is connected to the broker. */
  get connected(): boolean {
    return this.#client.connected;
  }

  /**
   * Tells `listener` each time the session is lost and each time it is back (not its own stop).
   * Called on mqtt.js's 'connect', before the broker sends the retained messages of the renewed
   * subscriptions. Returns a function that removes the listener.
   */
  onConnectionChange(listener: ConnectionListener): () => void {
    this.#connectionListeners.add(listener);
    return () => this.#connectionListeners.delete(listener);
  }

  #connectionChanged(up: boolean): void {
    if (up === this.#up || this.#stopped) return;
    this.#up = up;
    for (const listener of this.#connectionListeners) listener(up);
  }

  /** Ends the session; requests still waiting fail at once rather than keep their timers running. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const stopped = new Error('the control channel has stopped');
    for (const { cancel } of [...this.#pending.values()]) cancel(stopped);
    await this.#untap?.();
    if (this.#listening && this.#client.connected) {
      this.#listening = false;
      // Bounded like the end below: a broker gone silent during the stop sends no PUBACK.
      await lingerAtMost(this.#client.publishAsync(this.#listenerTopic, '', { qos: 1, retain: true }).catch(() => undefined));
    }
    // Without the broker, a polite end would wait forever for the QoS 1 requests queued meanwhile,
    // and a silent one never closes: bounded (end-within.ts).
    await endWithin(this.#client);
  }
}
