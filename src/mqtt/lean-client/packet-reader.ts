import { packetSize, readPackets } from '../packet-codec.js';
import { throwLater } from '../../shared/throw-later.js';
import type { LinkOwner } from './link.js';

/**
 * Whole packets out of what the broker sends (`readPackets`), for the client; the start of a
 * packet cut short waits here for the rest. Shared by the three kinds of link.
 */
export class PacketReader {
  readonly #client: LinkOwner;
  readonly #isOpen: () => boolean;
  readonly #maxPacketBytes: number;
  /** The start of a packet whose rest has not arrived yet, in the chunks it came in. */
  #partial: Buffer[] = [];
  #partialBytes = 0;
  /** Bytes the cut-short packet needs in all (one more than it has while its header is incomplete). */
  #needed = 0;

  constructor(client: LinkOwner, isOpen: () => boolean) {
    this.#client = client;
    this.#isOpen = isOpen;
    this.#maxPacketBytes = client.maxIncomingPacketBytes;
  }

  /**
   * Hands each whole packet to the client while the link is open; returns the error of a malformed
   * one, or of one over the client's size limit. A large packet arriving in many chunks is joined
   * once, when its last byte is in; one over the limit is refused once its fixed header is in
   * (`readPackets` checks it), so what waits here is never more than the limit.
   */
  feed(chunk: Buffer): Error | undefined {
    if (!this.#isOpen()) return undefined;
    let data = chunk;
    if (this.#partialBytes > 0) {
      this.#partial.push(chunk);
      this.#partialBytes += chunk.length;
      if (this.#partialBytes < this.#needed) return undefined;
      data = Buffer.concat(this.#partial, this.#partialBytes);
      this.clear();
    }
    try {
      const read = readPackets(
        data,
        (packet) => {
          if (!this.#isOpen()) return;
          // What a listener throws is its own failure, not a malformed packet from the broker.
          try {
            this.#client.onPacket(packet);
          } catch (error) {
            throwLater(error);
          }
        },
        this.#maxPacketBytes,
      );
      if (read < data.length) {
        const rest = data.subarray(read);
        this.#partial = [rest];
        this.#partialBytes = rest.length;
        this.#needed = packetSize(rest) ?? rest.length + 1;
      }
      return undefined;
    } catch (error) {
      return error as Error;
    }
  }

  clear(): void {
    this.#partial = [];
    this.#partialBytes = 0;
    this.#needed = 0;
  }
}
