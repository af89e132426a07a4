/**
 * The kinds of transcript entry `transcript show --kind` picks, in a module of their own: the
 * command's --help lists them, and every start of the CLI reads its help, while the entry schemas
 * (transcript-format.ts) are loaded only to read a transcript.
 */

/**
 * What `--kind` can name: an entry's kind (`api`, `mqtt`, `sim`, `judge`: the judge's findings, `client`: requests as the judge saw them), the contract message of an MQTT
 * entry, or the event of a `sim` entry.
 */
export const ENTRY_KINDS = ['api', 'mqtt', 'sim', 'judge', 'client', 'status', 'lockState', 'unlock', 'acks', 'fault', 'control', 'timeout'] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

export function isEntryKind(value: string): value is EntryKind {
  return (ENTRY_KINDS as readonly string[]).includes(value);
}
