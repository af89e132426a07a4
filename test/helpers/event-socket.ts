/** A WebSocket client of `/sim/v1/events` that records events and waits for the ones it expects. */
import WebSocket from 'ws';

export type StreamEvent = { seq: number; type: string; time: string; [key: string]: any };

export class EventSocket {
  readonly events: StreamEvent[] = [];
  readonly socket: WebSocket;
  readonly closed: Promise<{ code: number; reason: string }>;
  #waiters: { predicate: (e: StreamEvent) => boolean; resolve: (e: StreamEvent) => void }[] = [];

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (data) => {
      const event = JSON.parse(data.toString()) as StreamEvent;
      this.events.push(event);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.predicate(event)) return true;
        w.resolve(event);
        return false;
      });
    });
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<EventSocket> {
    const socket = new WebSocket(url.replace(/^http/, 'ws'), { headers });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new EventSocket(socket)));
      socket.once('unexpected-response', (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
      socket.once('error', reject);
    });
  }

  waitFor(predicate: (e: StreamEvent) => boolean, what: string, timeoutMs = 5000): Promise<StreamEvent> {
    const found = this.events.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; last events: ${JSON.stringify(this.events.slice(-5))}`)), timeoutMs);
      this.#waiters.push({
        predicate,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
    });
  }

  close(): void {
    this.socket.close();
  }
}
