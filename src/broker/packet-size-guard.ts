/**
 * The embedded broker's packet size limit (docs/mqtt-security.md, "The embedded broker, secured"),
 * checked on a connection's bytes before aedes parses them, so an oversized packet is refused
 * before its body is buffered.
 */
/** Largest MQTT packet by default: a larger one closes the connection. */
export const DEFAULT_MAX_PACKET_BYTES = 65_536;

/**
 * Reads the fixed headers (MQTT 3.1.1 §2.2) of the bytes a connection sends, without buffering
 * them, and says when a packet is larger than `max` bytes, before its body is read. One small
 * state machine per connection; a few comparisons per chunk.
 */
export class PacketSizeGuard {
  readonly #max: number;
  /** Bytes of the current packet's body still to come. */
  #skip = 0;
  /** 0: at a packet's first byte; 1-4: in its remaining length, at that byte. */
  #lengthByte = 0;
  #length = 0;
  #multiplier = 1;

  constructor(max: number) {
    this.#max = max;
  }

  /** False when the bytes hold (the start of) a packet larger than allowed, or a malformed length. */
  feed(bytes: Uint8Array): boolean {
    let at = 0;
    const end = bytes.length;
    while (at < end) {
      if (this.#skip > 0) {
        const take = Math.min(this.#skip, end - at);
        this.#skip -= take;
        at += take;
        continue;
      }
      if (this.#lengthByte === 0) {
        at++; // type and flags
        this.#lengthByte = 1;
        this.#length = 0;
        this.#multiplier = 1;
        continue;
      }
      const byte = bytes[at++]!;
      this.#length += (byte & 0x7f) * this.#multiplier;
      this.#multiplier *= 128;
      if (byte & 0x80) {
        if (++this.#lengthByte > 4) return false;
        continue;
      }
      if (1 + this.#lengthByte + this.#length > this.#max) return false;
      this.#skip = this.#length;
      this.#lengthByte = 0;
    }
    return true;
  }
}
