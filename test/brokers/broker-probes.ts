/**
 * Probes of what a broker does where brokers differ, each made with a plain MQTT client (MQTT.js)
 * against the running broker: the figures of docs/brokers.md come from these, and the broker
 * matrix holds each broker to them (broker-traits.ts).
 */
import net from 'node:net';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import mqttPacket from 'mqtt-packet';

const PROBE_TIMEOUT_MS = 8000;

let sequence = 0;
/** A client id no other probe or station uses. */
export function probeId(what: string): string {
  sequence += 1;
  return `probe-${what}-${process.pid}-${sequence}`;
}

/** Connects, or answers the error that refused it (CONNACK code, or a closed connection). */
export async function tryConnect(url: string, options: IClientOptions): Promise<{ client: MqttClient } | { refused: string }> {
  const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: PROBE_TIMEOUT_MS, ...options });
  return new Promise((resolve) => {
    const done = (outcome: { client: MqttClient } | { refused: string }): void => {
      client.removeAllListeners('connect').removeAllListeners('error').removeAllListeners('close');
      client.on('error', () => undefined);
      if ('refused' in outcome) client.end(true);
      resolve(outcome);
    };
    client.once('connect', () => done({ client }));
    client.once('error', (error) => done({ refused: (error as { code?: number }).code !== undefined ? `CONNACK ${(error as { code?: number }).code}` : error.message }));
    client.once('close', () => done({ refused: 'connection closed' }));
  });
}

async function connected(url: string, options: IClientOptions = {}): Promise<MqttClient> {
  const outcome = await tryConnect(url, { clientId: probeId('c'), ...options });
  if ('refused' in outcome) throw new Error(`probe client refused by ${url}: ${outcome.refused}`);
  return outcome.client;
}

function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]).finally(() => clearTimeout(timer));
}

/**
 * QoS 2: the QoS a subscription asking for 2 is granted (128 = refused), and what a QoS 2 PUBLISH
 * gets: `'completed'` (PUBREC, PUBREL, PUBCOMP), or `'disconnected'` (the broker closed the connection).
 */
export async function probeQos2(url: string): Promise<{ granted: number; publish: 'completed' | 'disconnected'; deliveredQos: number | undefined }> {
  const client = await connected(url);
  try {
    const topic = `probe/qos2/${probeId('t')}`;
    const grants = await client.subscribeAsync(topic, { qos: 2 });
    const granted = grants[0]!.qos;
    const delivered = new Promise<number>((resolve) => client.once('message', (_t, _p, packet) => resolve(packet.qos)));
    const closed = new Promise<'disconnected'>((resolve) => client.once('close', () => resolve('disconnected')));
    const publish = await within(Promise.race([client.publishAsync(topic, 'x', { qos: 2 }).then(() => 'completed' as const), closed]), PROBE_TIMEOUT_MS, 'disconnected' as const);
    const deliveredQos = publish === 'completed' ? await within(delivered, PROBE_TIMEOUT_MS, undefined) : undefined;
    return { granted, publish, deliveredQos };
  } finally {
    client.end(true);
  }
}

/** Whether the broker takes each client id (MQTT 3.1.1, section 3.1.3.1 lets it refuse any but 1-23 of [0-9a-zA-Z]). */
export async function probeClientIds(url: string): Promise<{ empty: boolean; emptyPersistent: boolean; long: boolean; slashes: boolean }> {
  const takes = async (options: IClientOptions): Promise<boolean> => {
    const outcome = await tryConnect(url, options);
    if ('refused' in outcome) return false;
    await outcome.client.endAsync(true);
    return true;
  };
  return {
    empty: await takes({ clientId: '', clean: true }),
    // The spec says refuse it (identifier rejected, 3.1.3.1). MQTT.js will not send it, so a raw CONNECT.
    emptyPersistent: (await rawConnack(url, { clientId: '', clean: false })) === 0,
    long: await takes({ clientId: `${probeId('long')}-${'x'.repeat(200)}` }),
    slashes: await takes({ clientId: `station-sim/${probeId('s')}/a+b#c` }),
  };
}

/** The largest of `sizes` (payload bytes) a QoS 1 PUBLISH of which the broker acknowledges and delivers. */
export async function probeMaxPayload(url: string, sizes: number[]): Promise<number> {
  let largest = 0;
  for (const size of sizes) {
    const client = await connected(url);
    try {
      const topic = `probe/size/${probeId('t')}`;
      await client.subscribeAsync(topic, { qos: 1 });
      const delivered = new Promise<number>((resolve) => client.once('message', (_t, payload) => resolve(payload.length)));
      const closed = new Promise<'closed'>((resolve) => client.once('close', () => resolve('closed')));
      const acked = await within(Promise.race([client.publishAsync(topic, Buffer.alloc(size, 0x61), { qos: 1 }).then(() => 'acked' as const), closed]), PROBE_TIMEOUT_MS, 'closed' as const);
      const length = acked === 'acked' ? await within(delivered, PROBE_TIMEOUT_MS, 0) : 0;
      if (length !== size) break;
      largest = size;
    } finally {
      client.end(true);
    }
  }
  return largest;
}

/** Whether a CONNECT of MQTT 5 is accepted, and if not how it is refused. */
export async function probeMqtt5(url: string): Promise<'accepted' | string> {
  const outcome = await tryConnect(url, { clientId: probeId('v5'), protocolVersion: 5 });
  if ('refused' in outcome) return outcome.refused;
  await outcome.client.endAsync(true);
  return 'accepted';
}

/**
 * Retained messages: whether a new subscription gets the retained message of a topic when its
 * filter holds a wildcard (`+`), and when it is the topic itself. One client subscribes to the
 * wildcard filter, then to another retained topic by its exact name: that one's retained message
 * comes after whatever the first subscription brought, so its arrival closes the wait.
 */
export async function probeRetained(url: string): Promise<{ exact: boolean; wildcard: boolean }> {
  const base = `probe/retained/${probeId('r')}`;
  const sentinel = `${base}/sentinel`;
  const publisher = await connected(url);
  await publisher.publishAsync(`${base}/a/status`, 'kept', { qos: 1, retain: true });
  await publisher.publishAsync(sentinel, 'last', { qos: 1, retain: true });
  const client = await connected(url);
  try {
    const seen: string[] = [];
    const last = new Promise<boolean>((resolve) =>
      client.on('message', (topic) => {
        seen.push(topic);
        if (topic === sentinel) resolve(true);
      }),
    );
    await client.subscribeAsync(`${base}/+/status`, { qos: 1 });
    await client.subscribeAsync(sentinel, { qos: 1 });
    const exact = await within(last, PROBE_TIMEOUT_MS, false);
    return { exact, wildcard: seen.includes(`${base}/a/status`) };
  } finally {
    client.end(true);
    await publisher.publishAsync(`${base}/a/status`, '', { qos: 1, retain: true });
    await publisher.publishAsync(sentinel, '', { qos: 1, retain: true });
    await publisher.endAsync();
  }
}

/**
 * QoS 1 redelivery (MQTT 3.1.1, section 4.4): a persistent session receives a QoS 1 message and
 * drops its connection without a PUBACK; on its return the broker sends the message again. Answers
 * whether it came again and with the DUP flag.
 */
export async function probeRedelivery(url: string): Promise<{ redelivered: boolean; dup: boolean }> {
  const clientId = probeId('redeliver');
  const topic = `probe/redeliver/${clientId}`;
  const first = await connected(url, { clientId, clean: false });
  await first.subscribeAsync(topic, { qos: 1 });
  // Never calling back from handleMessage holds the PUBACK back.
  const arrived = new Promise<void>((resolve) => {
    first.handleMessage = (_packet, _callback) => resolve();
  });
  const publisher = await connected(url);
  await publisher.publishAsync(topic, 'once', { qos: 1 });
  await publisher.endAsync();
  await within(arrived, PROBE_TIMEOUT_MS, undefined);
  first.stream.destroy();
  await new Promise<void>((resolve) => first.once('close', () => resolve()));
  first.end(true);
  const second = mqtt.connect(url, { clientId, clean: false, reconnectPeriod: 0 });
  try {
    const again = await within(new Promise<{ dup: boolean }>((resolve) => second.once('message', (_t, _p, packet) => resolve({ dup: packet.dup }))), PROBE_TIMEOUT_MS, undefined);
    return { redelivered: again !== undefined, dup: again?.dup === true };
  } finally {
    // Ends the session too: a clean connection with the same id drops what the broker kept.
    await second.endAsync(true);
    const cleaner = await tryConnect(url, { clientId, clean: true });
    if ('client' in cleaner) await cleaner.client.endAsync();
  }
}

/** The CONNACK return code for a raw MQTT 3.1.1 CONNECT (undefined: the broker closed without one). */
export async function rawConnack(url: string, connect: { clientId: string; clean: boolean }): Promise<number | undefined> {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  const parser = mqttPacket.parser({ protocolVersion: 4 });
  const answer = new Promise<number | undefined>((resolve) => {
    parser.on('packet', (packet) => resolve(packet.cmd === 'connack' ? packet.returnCode : undefined));
    socket.on('data', (bytes) => parser.parse(bytes));
    socket.on('close', () => resolve(undefined));
    socket.on('error', () => resolve(undefined));
  });
  // mqtt-packet will not encode a persistent session without a client id either: written by hand
  // (MQTT 3.1.1, section 3.1): CONNECT, protocol "MQTT" level 4, flags, keepalive 10 s, client id.
  const id = Buffer.from(connect.clientId, 'utf8');
  const variable = Buffer.from([0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, connect.clean ? 0x02 : 0x00, 0x00, 0x0a]);
  const payload = Buffer.concat([Buffer.from([id.length >> 8, id.length & 0xff]), id]);
  const length = variable.length + payload.length;
  if (length > 127) throw new Error('rawConnack: client ids this long need a longer length field');
  socket.write(Buffer.concat([Buffer.from([0x10, length]), variable, payload]));
  const code = await within(answer, PROBE_TIMEOUT_MS, undefined);
  socket.destroy();
  return code;
}

/**
 * Whether a retained message outlives a restart of the broker (`restart` kills it and starts it on
 * its files). After the restart a second retained topic is published, and a new client subscribes
 * to the first, then to the second: the second's arrival closes the wait for the first.
 */
export async function probeRetainedAcrossRestart(url: string, restart: () => Promise<void>): Promise<boolean> {
  const base = `probe/restart/${probeId('r')}`;
  const publisher = await connected(url);
  await publisher.publishAsync(`${base}/kept`, 'kept', { qos: 1, retain: true });
  await publisher.endAsync();
  await restart();
  const client = await connected(url, { reconnectPeriod: 0 });
  try {
    await client.publishAsync(`${base}/sentinel`, 'last', { qos: 1, retain: true });
    const seen: string[] = [];
    const last = new Promise<void>((resolve) =>
      client.on('message', (topic) => {
        seen.push(topic);
        if (topic === `${base}/sentinel`) resolve();
      }),
    );
    await client.subscribeAsync(`${base}/kept`, { qos: 1 });
    await client.subscribeAsync(`${base}/sentinel`, { qos: 1 });
    await within(last, PROBE_TIMEOUT_MS, undefined);
    if (!seen.includes(`${base}/sentinel`)) throw new Error('the broker did not deliver a retained message published after its restart');
    return seen.includes(`${base}/kept`);
  } finally {
    for (const topic of [`${base}/kept`, `${base}/sentinel`]) await client.publishAsync(topic, '', { qos: 1, retain: true }).catch(() => undefined);
    client.end(true);
  }
}
