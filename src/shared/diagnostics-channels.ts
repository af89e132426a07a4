/**
 * The names of the `node:diagnostics_channel` channels station-sim publishes on, in a module that
 * imports nothing: a test suite subscribes to them without loading the judge or the transcript
 * recorder (test/helpers/judge-setup.ts does so in every test file).
 */

/** Every finding of the judge, whatever the rule (src/judge/judge-log.ts). */
export const JUDGE_FINDING_CHANNEL = 'station-sim:judge.finding';

/** Every transcript as it closes, with its path (src/transcript/transcript-recorder.ts). */
export const TRANSCRIPT_CLOSED_CHANNEL = 'station-sim:transcript.closed';
