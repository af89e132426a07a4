/**
 * The transcript file: JSON lines, one entry per MQTT message of the contract and per API request,
 * with the time and, where there is one, the command id that links an unlock request to its MQTT
 * command, ack and the lock states that follow. Never a token or a password: API entries carry the
 * route pattern, not the URL, and no headers or bodies.
 */
export type TranscriptEntry =
  | {
      t: string;
      kind: 'mqtt';
      /** `down`: service → station (commands); `up`: station → everyone. */
      direction: 'up' | 'down';
      station: string;
      lockId?: string;
      topic: string;
      payload: unknown;
      commandId?: string;
    }
  | { t: string; kind: 'api'; method: string; route: string; status: number; ms: number; commandId?: string }
  | { t: string; kind: 'sim'; event: string; station?: string; detail: string };

/** Reads a transcript file's text; lines that are not entries are skipped and counted. */
export function parseTranscript(text: string): { entries: TranscriptEntry[]; skipped: number } {
  const entries: TranscriptEntry[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const entry = JSON.parse(line) as TranscriptEntry;
      if (typeof entry.t === 'string' && typeof entry.kind === 'string') entries.push(entry);
      else skipped += 1;
    } catch {
      skipped += 1;
    }
  }
  return { entries, skipped };
}

/**
 * The entries of one command's chain: the API request, the command, its acks, and the state
 * changes of that lock after the command up to the next command for the same lock.
 */
export function commandChain(entries: TranscriptEntry[], commandId: string): TranscriptEntry[] {
  const command = entries.find((e) => e.kind === 'mqtt' && e.direction === 'down' && e.commandId === commandId);
  if (!command || command.kind !== 'mqtt') return entries.filter((e) => 'commandId' in e && e.commandId === commandId);
  const start = entries.indexOf(command);
  const next = entries.findIndex(
    (e, i) => i > start && e.kind === 'mqtt' && e.direction === 'down' && e.station === command.station && e.lockId === command.lockId,
  );
  const end = next === -1 ? entries.length : next;
  return entries.filter((e, i) => {
    if ('commandId' in e && e.commandId === commandId) return true;
    if (i <= start || i >= end || e.kind !== 'mqtt') return false;
    return e.station === command.station && e.lockId === command.lockId && e.topic.endsWith('/state');
  });
}

/** One readable line per entry, with the time since the first entry shown. */
export function formatTimeline(entries: TranscriptEntry[]): string[] {
  const origin = entries.length > 0 ? Date.parse(entries[0]!.t) : 0;
  return entries.map((entry) => {
    const offset = `+${((Date.parse(entry.t) - origin) / 1000).toFixed(3)}s`.padStart(10);
    switch (entry.kind) {
      case 'api':
        return `${offset}  API   ${entry.method} ${entry.route} → ${entry.status} (${entry.ms} ms)${entry.commandId ? `  [${entry.commandId}]` : ''}`;
      case 'sim':
        return `${offset}  SIM   ${entry.event}${entry.station ? ` ${entry.station}` : ''}: ${entry.detail}`;
      case 'mqtt': {
        const arrow = entry.direction === 'down' ? '→' : '←';
        return `${offset}  MQTT  ${arrow} ${entry.station}${entry.lockId ? `/${entry.lockId}` : ''}  ${entry.topic}  ${JSON.stringify(entry.payload)}`;
      }
    }
  });
}
