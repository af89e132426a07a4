import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TranscriptReader } from '../../src/transcript/transcript-reader.js';

const line = (i: number): string =>
  `{"t":"2026-01-01T00:00:0${i}.000Z","kind":"mqtt","direction":"up","station":"S","topic":"stations/S/status","payload":{"n":${i}}}\n`;

describe('TranscriptReader', () => {
  it('hands out each entry as its line arrives, before the input ends, and counts the lines it skips', async () => {
    const input = new PassThrough();
    const reader = new TranscriptReader(input);
    const entries = reader[Symbol.asyncIterator]();
    input.write(line(1));
    input.write('{"t":"2026-01-01T00:00:00.000Z","kind":"mqtt"}\r\n');
    input.write(`\n${line(2).trimEnd()}\r\n`);
    const first = await entries.next();
    expect(first.value).toMatchObject({ payload: { n: 1 } });
    const second = await entries.next();
    expect(second.value).toMatchObject({ payload: { n: 2 } });
    expect(reader.skipped).toBe(1);
    input.end('{"t":"2026-01-01T00:00:03.000Z"');
    expect((await entries.next()).done).toBe(true);
    expect(reader.skipped).toBe(2);
  });
});
