/** A test-side MQTT client that records what it sees and waits for what it expects. */
import mqtt, { type MqttClient } from 'mqtt';

export interface Seen {
  topic: string;
  payload: string;
  retain: boolean;
  json: any;
}

export class MqttObserver {
  readonly messages: Seen[] = [];
  readonly client: MqttClient;
  #waiters: { predicate: (m: Seen) => boolean; resolve: (m: Seen) => void }[] = [];

  private constructor(client: MqttClient) {
    this.client = client;
    client.on('message', (topic, payload, packet) => {
      const text = payload.toString();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const seen = { topic, payload: text, retain: packet.retain, json };
      this.messages.push(seen);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.predicate(seen)) return true;
        w.resolve(seen);
        return false;
      });
    });
  }

  static async connect(url: string, filters: string[], options: mqtt.IClientOptions = {}): Promise<MqttObserver> {
    const client = await mqtt.connectAsync(url, { reconnectPeriod: 100, ...options });
    const observer = new MqttObserver(client);
    await client.subscribeAsync(filters, { qos: 1 });
    return observer;
  }

  /** Resolves with the first message (already seen or future) that matches. */
  waitFor(predicate: (m: Seen) => boolean, what: string, timeoutMs = 5000): Promise<Seen> {
    const found = this.messages.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w.resolve !== done);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; saw ${this.messages.length} messages: ${this.messages.slice(-5).map((m) => `${m.topic} ${m.payload}`).join(' | ')}`));
      }, timeoutMs);
      const done = (m: Seen): void => {
        clearTimeout(timer);
        resolve(m);
      };
      this.#waiters.push({ predicate, resolve: done });
    });
  }

  /** Forgets what was seen so far. */
  clear(): void {
    this.messages.length = 0;
  }

  publish(topic: string, payload: object | string): Promise<unknown> {
    return this.client.publishAsync(topic, typeof payload === 'string' ? payload : JSON.stringify(payload), { qos: 1 });
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }
}
