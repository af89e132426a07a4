/**
 * Imported for its effect: the wire schemas mark timestamps `format: date-time` (for the OpenAPI
 * document), and TypeBox's own checker checks a format only once told how. The server writes them
 * with toISOString.
 */
import { FormatRegistry } from '@sinclair/typebox';

if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) && !Number.isNaN(Date.parse(value)));
}
