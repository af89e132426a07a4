/**
 * Writes a transcript (`--record FILE`) from what the event hub sees: every contract message that
 * crosses the broker and every API request summary. Appends as it goes, so a CI run that is killed
 * still leaves everything up to that moment.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import type { EventHub } from '../control/event-hub.js';
import type { Clock } from '../station/clock.js';
import type { TranscriptEntry } from './transcript-format.js';

export interface TranscriptOptions {
  path: string;
  hub: EventHub;
  clock: Clock;
}

export interface StartedTranscript {
  readonly path: string;
  stop(): Promise<void>;
}

export async function startTranscript(options: TranscriptOptions): Promise<StartedTranscript> {
  const out: WriteStream = createWriteStream(options.path, { flags: 'w' });
  await new Promise<void>((resolve, reject) => {
    out.once('open', () => resolve());
    out.once('error', reject);
  });
  const write = (entry: TranscriptEntry): void => {
    out.write(`${JSON.stringify(entry)}\n`);
  };
  const time = (): string => new Date(options.clock.now()).toISOString();
  const stopMessages = options.hub.onContractMessage((message) => {
    if (message.kind === 'simEvent') return; // recorded from the hub's fault events below
    let payload: unknown = message.payload;
    try {
      payload = JSON.parse(message.payload);
    } catch {
      // A malformed payload is recorded as the text it was: that may be the bug being hunted.
    }
    const commandId = typeof payload === 'object' && payload !== null && 'commandId' in payload ? String((payload as { commandId: unknown }).commandId) : undefined;
    write({
      t: time(),
      kind: 'mqtt',
      direction: message.kind === 'unlock' ? 'down' : 'up',
      station: message.token,
      ...(message.lockId !== undefined ? { lockId: message.lockId } : message.kind === 'acks' && commandId ? { lockId: String((payload as { lockId?: unknown }).lockId ?? '') } : {}),
      topic: message.topic,
      payload,
      ...(commandId ? { commandId } : {}),
    });
  });
  const stopEvents = options.hub.subscribe((event) => {
    if (event.type === 'api.request') {
      const { method, route, status, ms } = event;
      write({ t: event.time, kind: 'api', method, route, status, ms, ...(event.commandId ? { commandId: event.commandId } : {}) });
    } else if (event.type === 'fault.applied') {
      write({ t: event.time, kind: 'sim', event: 'fault', station: event.token, detail: `${event.fault}${event.lockId ? ` lock ${event.lockId}` : ''}${event.commandId ? ` command ${event.commandId}` : ''}` });
    } else if (event.type === 'control') {
      write({ t: event.time, kind: 'sim', event: 'control', ...(event.token ? { station: event.token } : {}), detail: event.action });
    } else if (event.type === 'command.timeout') {
      write({ t: event.time, kind: 'sim', event: 'timeout', station: event.token, detail: `no ack for command ${event.commandId} after ${event.ms} ms` });
    }
  });
  return {
    path: options.path,
    stop: async () => {
      stopMessages();
      stopEvents();
      await new Promise<void>((resolve) => out.end(resolve));
    },
  };
}
