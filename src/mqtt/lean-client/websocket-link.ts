import type tls from 'node:tls';
import WebSocket from 'ws';
import type { LinkOwner } from './link.js';
import { NetworkLink } from './network-link.js';
import type { LeanTarget } from './target.js';

/** The MQTT-over-WebSocket subprotocol (MQTT 3.1.1, section 6); mqtt.js's WebSocket sessions (transport.ts) use it too. */
export const MQTT_WS_PROTOCOL = 'mqtt';

/**
 * MQTT over a WebSocket (MQTT 3.1.1, section 6): subprotocol `mqtt`, binary frames, each packet
 * pushed as one frame; what arrives is read as a byte stream (a frame may hold part of a packet, or
 * several). Pushed while the WebSocket opens, packets wait here. ws sets TCP_NODELAY on its socket.
 */
export class WebSocketLink extends NetworkLink {
  #socket: WebSocket | undefined;
  /** destroy() was called: what the WebSocket reports from here on is the drop we asked for. */
  #dropping = false;

  constructor(client: LinkOwner, target: Extract<LeanTarget, { kind: 'ws' }>) {
    super(client);
    this.connectWith(target.tls, (options) => this.#attach(target.url, options));
  }

  #attach(url: string, options: tls.ConnectionOptions | undefined): void {
    const socket = new WebSocket(url, MQTT_WS_PROTOCOL, { ...options, perMessageDeflate: false });
    this.#socket = socket;
    socket.binaryType = 'nodebuffer';
    socket.on('open', () => {
      this.waiting.drain(
        (packet) => socket.send(packet, { binary: true }, this.#sent),
        () => socket.close(1000),
      );
    });
    socket.on('message', (data: Buffer) => {
      const error = this.reader.feed(data);
      if (error) this.destroy(error);
    });
    socket.on('error', (error) => {
      if (!this.closed && !this.#dropping) this.client.onLinkError(error);
    });
    socket.on('close', () => this.close());
  }

  push(packet: Buffer | null): void {
    const socket = this.#socket;
    if (this.closed || this.#dropping) return;
    if (!socket || socket.readyState === WebSocket.CONNECTING) this.waiting.add(packet);
    else if (socket.readyState !== WebSocket.OPEN) return;
    else if (packet) socket.send(packet, { binary: true }, this.#sent);
    else socket.close(1000);
  }

  /** A frame went out: once nothing waits in the WebSocket's buffer, the client may send what it held back. */
  readonly #sent = (): void => {
    if (!this.closed && this.#socket !== undefined && this.#socket.bufferedAmount === 0) this.client.onLinkDrain(this);
  };

  destroy(error?: Error): void {
    if (this.closed || this.#dropping) return;
    this.#dropping = true;
    if (error) this.client.onLinkError(error);
    if (this.#socket) this.#socket.terminate();
    else queueMicrotask(() => this.close());
  }

  backlog(): number {
    return this.waiting.bytes + (this.#socket?.bufferedAmount ?? 0);
  }
}
