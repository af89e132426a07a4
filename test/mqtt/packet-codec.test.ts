/**
 * The hand-written MQTT 3.1.1 codec against mqtt-packet, the parser and generator aedes and mqtt.js
 * use: what we write, it reads the same; what it writes, we read the same; malformed input is an
 * error, never a wrong packet.
 */
import { describe, expect, it } from 'vitest';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { encodePuback, encodePublish, packetSize, readPackets, type IncomingPacket } from '../../src/mqtt/packet-codec.js';

function parseOne(buffer: Buffer): Packet {
  const parser = mqttPacket.parser({ protocolVersion: 4 });
  const packets: Packet[] = [];
  parser.on('packet', (packet: Packet) => packets.push(packet));
  expect(parser.parse(buffer)).toBe(0);
  expect(packets).toHaveLength(1);
  return packets[0]!;
}

function read(buffer: Buffer): IncomingPacket[] {
  const packets: IncomingPacket[] = [];
  expect(readPackets(buffer, (packet) => packets.push(packet))).toBe(buffer.length);
  return packets;
}

const generate = (packet: Packet): Buffer => mqttPacket.generate(packet, { protocolVersion: 4 });

describe('writing', () => {
  it('PUBLISH parses back to the same topic, payload, QoS, retain flag and packet id', () => {
    // Remaining lengths of 1, 2 and 3 bytes (MQTT 3.1.1, section 2.2.3), a multi-byte topic, QoS 0 and 1.
    for (const size of [0, 100, 200, 20_000]) {
      const payload = 'é'.repeat(size / 2) + 'x'.repeat(size % 2);
      for (const [qos, retain] of [[0, false], [1, true], [1, false]] as const) {
        const packet = parseOne(encodePublish('stations/ÜT-1/locks/1/state', payload, qos, retain, 4242));
        expect(packet).toMatchObject({ cmd: 'publish', topic: 'stations/ÜT-1/locks/1/state', qos, retain });
        expect((packet as { payload: Buffer }).payload.toString()).toBe(payload);
        if (qos === 1) expect(packet.messageId).toBe(4242);
      }
    }
    expect((parseOne(encodePublish('t', Buffer.from([0, 1, 2]), 0, false, 0)) as { payload: Buffer }).payload).toEqual(Buffer.from([0, 1, 2]));
  });

  it('PUBACK parses back to its packet id', () => {
    expect(parseOne(encodePuback(65535))).toMatchObject({ cmd: 'puback', messageId: 65535 });
    expect(parseOne(encodePuback(1))).toMatchObject({ cmd: 'puback', messageId: 1 });
  });
});

describe('reading', () => {
  it('reads what a broker sends a client, as mqtt-packet writes it', () => {
    const payload = Buffer.from('y'.repeat(20_000));
    const buffer = Buffer.concat([
      generate({ cmd: 'connack', returnCode: 0, sessionPresent: true }),
      generate({ cmd: 'connack', returnCode: 5, sessionPresent: false }),
      generate({ cmd: 'suback', messageId: 7, granted: [0, 1, 128] }),
      generate({ cmd: 'publish', topic: 'a/ü', payload, qos: 1, messageId: 513, retain: true, dup: true }),
      generate({ cmd: 'publish', topic: 'b', payload: Buffer.alloc(0), qos: 0, retain: false, dup: false }),
      generate({ cmd: 'puback', messageId: 65535 }),
      generate({ cmd: 'pingresp' }),
    ]);
    expect(read(buffer)).toEqual([
      { cmd: 'connack', sessionPresent: true, returnCode: 0 },
      { cmd: 'connack', sessionPresent: false, returnCode: 5 },
      { cmd: 'suback', messageId: 7, granted: [0, 1, 128] },
      { cmd: 'publish', topic: 'a/ü', payload, qos: 1, retain: true, dup: true, messageId: 513 },
      { cmd: 'publish', topic: 'b', payload: Buffer.alloc(0), qos: 0, retain: false, dup: false, messageId: undefined },
      { cmd: 'puback', messageId: 65535 },
      { cmd: 'pingresp' },
    ]);
  });

  it('reads back what it writes', () => {
    expect(read(Buffer.concat([encodePublish('s/T/acks', '{"ok":1}', 1, false, 9), encodePuback(9)]))).toEqual([
      { cmd: 'publish', topic: 's/T/acks', payload: Buffer.from('{"ok":1}'), qos: 1, retain: false, dup: false, messageId: 9 },
      { cmd: 'puback', messageId: 9 },
    ]);
  });

  it('refuses malformed and unexpected packets, after delivering those before them', () => {
    const good = encodePuback(3);
    const refuse = (bad: Buffer, message: RegExp): void => {
      const delivered: IncomingPacket[] = [];
      expect(() => readPackets(Buffer.concat([good, bad]), (packet) => delivered.push(packet))).toThrow(message);
      expect(delivered).toEqual([{ cmd: 'puback', messageId: 3 }]);
    };
    refuse(Buffer.from([0x00, 0x00]), /unexpected MQTT packet type 0/); // reserved (section 2.2.1)
    refuse(generate({ cmd: 'pubrec', messageId: 1 }), /unexpected MQTT packet type 5/); // needs QoS 2
    refuse(Buffer.from([0x36, 0x03, 0x00, 0x01, 0x61]), /QoS 3/); // [MQTT-3.3.1-4]
    refuse(Buffer.from([0x32, 0x03, 0x00, 0x01, 0x61]), /shorter than its topic/); // QoS 1 without a packet id
    refuse(Buffer.from([0x30, 0x05, 0x00, 0x09, 0x61, 0x62, 0x63]), /shorter than its topic/);
    refuse(Buffer.from([0x20, 0x01, 0x00]), /CONNACK of the wrong length/);
    refuse(Buffer.from([0x40, 0x03, 0x00, 0x01, 0x00]), /PUBACK of the wrong length/);
    refuse(Buffer.from([0x90, 0x02, 0x00, 0x01]), /SUBACK without return codes/);
    refuse(Buffer.from([0xd0, 0x01, 0x00]), /PINGRESP with a body/);
    refuse(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]), /malformed remaining length/); // over 4 bytes
  });

  it('reads only whole packets and says how far it got, whatever the length of their remaining-length field', () => {
    const one = encodePuback(7);
    const big = encodePublish('t', 'x'.repeat(20_000), 1, false, 9); // 3-byte remaining length
    const readAll = (buffer: Buffer): [number, string[]] => {
      const seen: string[] = [];
      return [readPackets(buffer, (packet) => seen.push(packet.cmd)), seen];
    };
    expect(readAll(one)).toEqual([4, ['puback']]);
    expect(readAll(Buffer.concat([one, big]))).toEqual([4 + big.length, ['puback', 'publish']]);
    expect(readAll(Buffer.concat([one, big.subarray(0, 2)]))).toEqual([4, ['puback']]); // cut in its length
    expect(readAll(Buffer.concat([one, big.subarray(0, 100)]))).toEqual([4, ['puback']]); // cut in its body
    expect(readAll(Buffer.from([0x30]))).toEqual([0, []]);
    expect(readAll(Buffer.from([0x40, 0x02, 0x00]))).toEqual([0, []]);
  });

  it('refuses a packet over the size limit as soon as its fixed header is in, after delivering those before it', () => {
    const good = encodePuback(3);
    const delivered: IncomingPacket[] = [];
    const fits = encodePublish('t', Buffer.alloc(1018), 0, false, 0); // 1,024 bytes in all
    expect(readPackets(Buffer.concat([good, fits]), (packet) => delivered.push(packet), 1024)).toBe(4 + 1024);
    expect(delivered.map((packet) => packet.cmd)).toEqual(['puback', 'publish']);
    delivered.length = 0;
    // Only the header and one byte of a PUBLISH announcing the largest remaining length, 268,435,455.
    const announced = Buffer.from([0x30, 0xff, 0xff, 0xff, 0x7f, 0x00]);
    expect(() => readPackets(Buffer.concat([good, announced]), (packet) => delivered.push(packet), 1024)).toThrow(
      'incoming MQTT packet of 268435460 bytes is over the limit of 1024 bytes',
    );
    expect(delivered).toEqual([{ cmd: 'puback', messageId: 3 }]);
    // Without a limit the same bytes are a packet cut short, left for the caller to complete.
    expect(readPackets(announced, () => undefined)).toBe(0);
  });

  it('tells the whole size of a packet from its fixed header, or undefined while the header is cut short', () => {
    for (const length of [0, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152]) {
      const packet = encodePublish('t', Buffer.alloc(length), 0, false, 0);
      expect(packetSize(packet.subarray(0, 6))).toBe(packet.length);
    }
    const big = encodePublish('t', Buffer.alloc(2_097_152), 0, false, 0); // 4-byte remaining length
    expect(packetSize(big.subarray(0, 4))).toBeUndefined();
    expect(packetSize(Buffer.from([0x30]))).toBeUndefined();
    expect(() => packetSize(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]))).toThrow(/malformed remaining length/);
  });
});
