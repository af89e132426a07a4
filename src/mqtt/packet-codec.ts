/**
 * The MQTT 3.1.1 packets of the lean client's hot path, written and read by hand: PUBLISH and
 * PUBACK out; CONNACK, SUBACK, PUBLISH, PUBACK and PINGRESP in. Every unlock passes about ten of
 * these through station and gateway sessions, and mqtt-packet's general streaming parser (a buffer list,
 * a state machine and debug calls per packet) was 8.5 % of the simulator's CPU under load. Here a
 * link's writes hold whole packets (a packet cut short waits for its rest), so reading one is a
 * few offsets into one buffer. CONNECT, SUBSCRIBE and DISCONNECT, sent once a session, stay with
 * mqtt-packet.
 * test/mqtt/packet-codec.test.ts checks both directions against mqtt-packet.
 */

/**
 * What a broker sends to a client that subscribes at QoS 0 or 1 and never unsubscribes. A PUBLISH
 * at QoS 2 is read (so the client can name the violation) and refused by the client.
 */
export type IncomingPacket =
  | { cmd: 'connack'; sessionPresent: boolean; returnCode: number }
  | { cmd: 'suback'; messageId: number; granted: number[] }
  | { cmd: 'publish'; topic: string; payload: Buffer; qos: 0 | 1 | 2; retain: boolean; dup: boolean; messageId: number | undefined }
  | { cmd: 'puback'; messageId: number }
  | { cmd: 'pingresp' };

/** PUBACK: fixed header 0x40, remaining length 2, packet id (MQTT 3.1.1, section 3.4). */
export function encodePuback(messageId: number): Buffer {
  return Buffer.from([0x40, 2, messageId >> 8, messageId & 0xff]);
}

/**
 * PUBLISH (MQTT 3.1.1, section 3.3): fixed header with QoS and RETAIN bits, remaining length as a
 * variable-length integer (section 2.2.3), topic as a UTF-8 string with its length, the packet id
 * at QoS 1, then the payload. One allocation, no intermediate chunks.
 */
// eslint-disable-next-line max-params -- runs per publish on the hot path: an options object would be a second allocation
export function encodePublish(topic: string, message: string | Buffer, qos: 0 | 1, retain: boolean, messageId: number): Buffer {
  const topicLength = Buffer.byteLength(topic);
  const payloadLength = typeof message === 'string' ? Buffer.byteLength(message) : message.length;
  const remaining = 2 + topicLength + (qos > 0 ? 2 : 0) + payloadLength;
  let lengthBytes = 1;
  for (let rest = remaining >> 7; rest > 0; rest >>= 7) lengthBytes += 1;
  if (lengthBytes > 4) throw new RangeError('MQTT packet too large');
  const buffer = Buffer.allocUnsafe(1 + lengthBytes + remaining);
  let offset = 0;
  buffer[offset++] = 0x30 | (qos << 1) | (retain ? 1 : 0);
  let rest = remaining;
  do {
    let byte = rest & 0x7f;
    rest >>= 7;
    if (rest > 0) byte |= 0x80;
    buffer[offset++] = byte;
  } while (rest > 0);
  offset = buffer.writeUInt16BE(topicLength, offset);
  offset += buffer.write(topic, offset);
  if (qos > 0) offset = buffer.writeUInt16BE(messageId, offset);
  if (typeof message === 'string') buffer.write(message, offset);
  else message.copy(buffer, offset);
  return buffer;
}

/**
 * A copy of an encoded QoS 1 PUBLISH with the DUP flag set, for sending it again on a new
 * connection with the same packet id (MQTT 3.1.1, sections 3.3.1.1 and 4.4): a copy, because the
 * first one may still be waiting in a link's buffer.
 */
export function withDup(publish: Buffer): Buffer {
  const copy = Buffer.from(publish);
  copy[0] = copy[0]! | 0x08;
  return copy;
}

/**
 * Writes `messageId` into an encoded QoS 1 PUBLISH (made with any id by `encodePublish`), where the
 * packet id follows the topic (MQTT 3.1.1, section 3.3.2.2): a publication queued before it had an
 * id gets one when it goes out, without being encoded twice.
 */
export function setPublishId(publish: Buffer, messageId: number): void {
  const position = readFixedHeader(publish, 0);
  if (position < 0 || ((publish[0]! >> 1) & 0x03) === 0) throw new Error('not a whole PUBLISH at QoS 1');
  publish.writeUInt16BE(messageId, position + 2 + publish.readUInt16BE(position));
}

/**
 * Reads the whole packets at the start of `data`, in order, handing each to `deliver`, and returns
 * how many bytes they took: each is a fixed-header byte, a remaining length of 1 to 4 bytes (MQTT
 * 3.1.1, section 2.2.3), then that many bytes. A packet cut short at the end is left for the
 * caller to complete. Throws on the first malformed or unexpected packet, or the first whose whole
 * size (fixed header included) is over `maxPacketBytes`; those before it are delivered. The size is
 * checked as soon as the fixed header is in, so a reader that waits for the rest of a packet never
 * waits for one over the limit. A PUBLISH payload is a view into `data`, not a copy.
 */
export function readPackets(data: Buffer, deliver: (packet: IncomingPacket) => void, maxPacketBytes = Number.POSITIVE_INFINITY): number {
  let offset = 0;
  while (offset < data.length) {
    const position = readFixedHeader(data, offset);
    if (position < 0) return offset;
    const end = position + headerRemaining;
    if (end - offset > maxPacketBytes) throw new Error(`incoming MQTT packet of ${end - offset} bytes is over the limit of ${maxPacketBytes} bytes`);
    if (end > data.length) return offset;
    deliver(readPacket(data[offset]!, data, position, end));
    offset = end;
  }
  return offset;
}

/**
 * The whole size in bytes of the packet `data` starts with, or `undefined` while its fixed header
 * is still cut short; throws on a malformed remaining length. A reader waiting for the rest of a
 * large packet knows from it when the packet is complete.
 */
export function packetSize(data: Buffer): number | undefined {
  const position = readFixedHeader(data, 0);
  return position < 0 ? undefined : position + headerRemaining;
}

/** The remaining length read by the last `readFixedHeader` (a module variable: no object per packet). */
let headerRemaining = 0;

/** Where the body of the packet at `offset` starts, its length left in `headerRemaining`; -1 when the header is cut short. */
function readFixedHeader(data: Buffer, offset: number): number {
  let position = offset + 1;
  let remaining = 0;
  let multiplier = 1;
  let byte: number;
  do {
    if (multiplier > 128 ** 3) throw new Error('malformed remaining length');
    if (position >= data.length) return -1;
    byte = data[position++]!;
    remaining += (byte & 0x7f) * multiplier;
    multiplier *= 128;
  } while ((byte & 0x80) !== 0);
  headerRemaining = remaining;
  return position;
}

function readPacket(header: number, data: Buffer, start: number, end: number): IncomingPacket {
  const length = end - start;
  const flags = header & 0x0f;
  switch (header >> 4) {
    case 3: {
      // PUBLISH (section 3.3): DUP, QoS and RETAIN in the flags; QoS 3 is malformed [MQTT-3.3.1-4].
      const qos = (flags >> 1) & 0x03;
      if (qos === 3) throw new Error('PUBLISH with QoS 3');
      if (length < 2) throw new Error('PUBLISH without a topic');
      const topicEnd = start + 2 + data.readUInt16BE(start);
      const idEnd = topicEnd + (qos > 0 ? 2 : 0);
      if (idEnd > end) throw new Error('PUBLISH shorter than its topic');
      return {
        cmd: 'publish',
        topic: data.toString('utf8', start + 2, topicEnd),
        payload: data.subarray(idEnd, end),
        qos: qos as 0 | 1 | 2,
        retain: (flags & 0x01) !== 0,
        dup: (flags & 0x08) !== 0,
        messageId: qos > 0 ? data.readUInt16BE(topicEnd) : undefined,
      };
    }
    case 2:
      // CONNACK (section 3.2): acknowledge flags, return code.
      if (length !== 2) throw new Error('CONNACK of the wrong length');
      return { cmd: 'connack', sessionPresent: (data[start]! & 0x01) !== 0, returnCode: data[start + 1]! };
    case 4:
      // PUBACK (section 3.4): the packet id.
      if (length !== 2) throw new Error('PUBACK of the wrong length');
      return { cmd: 'puback', messageId: data.readUInt16BE(start) };
    case 9: {
      // SUBACK (section 3.9): the packet id, then one return code per subscription.
      if (length < 3) throw new Error('SUBACK without return codes');
      return { cmd: 'suback', messageId: data.readUInt16BE(start), granted: [...data.subarray(start + 2, end)] };
    }
    case 13:
      if (length !== 0) throw new Error('PINGRESP with a body');
      return { cmd: 'pingresp' };
    default:
      // PUBREC/PUBREL/PUBCOMP need QoS 2 and UNSUBACK an UNSUBSCRIBE, which this client refuses to
      // send (lean-client/client.ts, "Not supported"); anything else is not for a client at all. Either
      // way the connection is closed as after a malformed packet (MQTT 3.1.1, section 4.8).
      throw new Error(`unexpected MQTT packet type ${header >> 4}`);
  }
}
