/** What `transcript judge` does: judge a recorded run again as the file streams, and print the verdict. */
import { printable } from '../../../transcript/transcript-format.js';
import { TranscriptReader } from '../../../transcript/transcript-reader.js';
import { judgeTranscript, type ReplayResult } from '../../../transcript/transcript-judge.js';
import { resolveFixture } from '../../../simulator/resolve-fixture.js';
import { judgeLine } from '../../../judge/judge-log.js';
import { findingCount, formatFinding } from '../../../judge/verdict.js';
import { UsageError, type CliIo } from '../../output.js';
import { checkReportPath, finishJudge, judgeOutletsOf } from '../../judge-notice.js';
import type { JudgeFlags } from './options.js';
import { openTranscript, readError, reportSkipped } from './transcript-file.js';

/** `transcript judge`'s exit codes. */
export const TRANSCRIPT_JUDGE_EXIT = { clean: 0, findings: 1 } as const;

/**
 * `transcript judge`: reads the file once, judging as it goes, prints each finding and a summary
 * on stdout, writes the JUnit report if asked, and answers the exit code.
 */
export async function judgeTranscriptFile(io: CliIo, argv: JudgeFlags): Promise<number> {
  const { file, fixture } = argv;
  if (fixture === '') throw new UsageError('--fixture needs a fixture file or a shipped fixture name');
  const outlets = judgeOutletsOf(argv);
  await checkReportPath(outlets);
  const settings = fixture === undefined ? undefined : (await resolveFixture(fixture)).judge;
  const input = await openTranscript(file);
  const reader = new TranscriptReader(input);
  let replay: ReplayResult;
  try {
    replay = await judgeTranscript(reader, settings === undefined ? {} : { settings });
  } catch (error) {
    throw readError(file, error);
  } finally {
    input.destroy();
  }
  reportSkipped(io, file, reader.skipped);
  const by = { given: `the judge settings of ${fixture ?? ''}`, transcript: 'the judge settings the transcript recorded', defaults: 'the default judge settings (the transcript recorded none; --fixture gives a fixture\'s)' }[replay.settingsSource];
  const requests = replay.requests > 0 ? ` and ${replay.requests} /v1 request${replay.requests === 1 ? '' : 's'}` : '';
  const lines = [`${file}: ${replay.judged} command${replay.judged === 1 ? '' : 's'}${requests} judged, by ${by}`];
  // The judge keeps the last findings (judge-log.ts): those before them are counted only.
  const total = findingCount(replay);
  if (total > replay.findings.length) lines.push(`  … ${total - replay.findings.length} earlier findings, counted but not listed`);
  for (const finding of replay.findings) lines.push(`  ${formatFinding(finding)}`);
  lines.push(judgeLine(replay.summary));
  io.stdout.write(lines.map(printable).join('\n') + '\n');
  if (replay.unjudgeable > 0) {
    io.stderr.write(
      `station-sim: ${replay.unjudgeable} command${replay.unjudgeable === 1 ? '' : 's'} of ${file} could not be judged: ${replay.unjudgeable === 1 ? 'its entry lacks' : 'their entries lack'} what the station saw (QoS, retain flag, online state): a transcript written before station-sim recorded it, or commands to stations whose fleet ran in another process than the recording one\n`,
    );
  }
  await finishJudge(io, replay, { ...outlets, mode: 'off' }, { settings: replay.settings });
  return total > 0 || replay.unjudgeable > 0 ? TRANSCRIPT_JUDGE_EXIT.findings : TRANSCRIPT_JUDGE_EXIT.clean;
}
