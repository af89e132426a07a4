/**
 * [MQTT-3.1.3-8]: a CONNECT with a zero-byte client id and CleanSession 0 is answered with CONNACK
 * return code 2 (identifier rejected) and the connection is closed; with CleanSession 1 it is
 * accepted. Over TCP on the broker thread and on this thread.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { startBrokerThread } from '../../src/broker/broker-thread.js';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';

/** CONNECT, MQTT 3.1.1, keepalive 60, client id "", with the given connect flags. */
const connect = (flags: number): Buffer => Buffer.from([0x10, 12, 0, 4, 0x4d, 0x51, 0x54, 0x54, 4, flags, 0, 60, 0, 0]);

/** PINGREQ: a connection that is still open answers it with PINGRESP (d000). */
const PINGREQ = Buffer.from([0xc0, 0]);

/**
 * What the broker answers (its CONNACK), and whether it closed the connection: after the CONNACK
 * the test sends a PINGREQ, so an open connection shows itself by its PINGRESP and a closed one by
 * its 'close', with no waiting to see that nothing happens.
 */
async function exchange(port: number, packet: Buffer): Promise<{ answer: string; closed: boolean }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let got = Buffer.alloc(0);
  const closed = new Promise<boolean>((resolve) => {
    socket.once('close', () => resolve(true));
    socket.on('data', (bytes: Buffer) => {
      const before = got.length;
      got = Buffer.concat([got, bytes]);
      if (before < 4 && got.length >= 4) socket.write(PINGREQ);
      if (got.subarray(4).toString('hex') === 'd000') resolve(false); // answered and still open
    });
  });
  socket.write(packet);
  const result = { closed: await closed, answer: got.subarray(0, 4).toString('hex') };
  socket.destroy();
  return result;
}

describe.each(['the broker thread', 'this thread'] as const)('an empty client id on %s', (kind) => {
  const start = () => (kind === 'this thread' ? startEmbeddedBroker({ port: 0 }) : startBrokerThread({ port: 0 }));

  it('with CleanSession 0 is refused: CONNACK 2, then the connection closes', async () => {
    const broker = await start();
    try {
      expect(await exchange(broker.port, connect(0))).toEqual({ answer: '20020002', closed: true });
    } finally {
      await broker.stop();
    }
  });

  it('with CleanSession 1 is accepted', async () => {
    const broker = await start();
    try {
      expect(await exchange(broker.port, connect(0x02))).toEqual({ answer: '20020000', closed: false });
    } finally {
      await broker.stop();
    }
  });
});
