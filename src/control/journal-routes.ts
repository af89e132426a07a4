/**
 * `GET /sim/v1/journal` and `DELETE /sim/v1/journal` (docs/control-plane.md, "Request journal"): what
 * reached the simulator since a mark. The query's values arrive as strings and are checked here,
 * one by one, so a bad one is named in the 400.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SimError } from '../errors.js';
import type { EventHub } from './event-hub.js';
import type { JournalQuery, RequestJournal } from './request-journal.js';
import { JOURNAL_CAPACITY, JournalClearReplySchema, JournalQuerySchema, JournalReplySchema } from './wire-schemas.js';
import type { Static } from '@sinclair/typebox';

export interface JournalRoutesOptions {
  journal: RequestJournal;
  hub: EventHub;
}

export const journalRoutes: FastifyPluginAsyncTypebox<JournalRoutesOptions> = async (plane, { journal, hub }) => {
  plane.get('/journal', { schema: { tags: ['journal'], operationId: 'getJournal', summary: 'What reached the simulator since a mark', querystring: JournalQuerySchema, response: { 200: JournalReplySchema } } }, async (request) => journal.query(parseJournalQuery(request.query)));

  plane.delete('/journal', { schema: { tags: ['journal'], operationId: 'clearJournal', summary: 'Empty the journal', response: { 200: JournalClearReplySchema } } }, async () => {
    const cleared = journal.clear();
    hub.emit({ type: 'control', action: 'journal cleared' });
    return { cleared, mark: journal.mark };
  });
};

/** The query of `GET /journal`, checked; throws `BAD_REQUEST` naming the first bad value. */
export function parseJournalQuery(query: Static<typeof JournalQuerySchema>): JournalQuery {
  const parsed: JournalQuery = {};
  if (query.since !== undefined) parsed.since = wholeNumber('since', query.since, 0, Number.MAX_SAFE_INTEGER);
  if (query.limit !== undefined) parsed.limit = wholeNumber('limit', query.limit, 1, JOURNAL_CAPACITY);
  if (query.kind !== undefined) {
    if (query.kind !== 'api' && query.kind !== 'command') throw new SimError('BAD_REQUEST', `kind must be "api" or "command", not ${JSON.stringify(query.kind)}`);
    parsed.kind = query.kind;
  }
  if (query.token !== undefined) {
    if (query.token.length === 0) throw new SimError('BAD_REQUEST', 'token must not be empty');
    parsed.token = query.token;
  }
  return parsed;
}

function wholeNumber(name: string, text: string, min: number, max: number): number {
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new SimError('BAD_REQUEST', `${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(text.slice(0, 40))}`);
  }
  return value;
}
