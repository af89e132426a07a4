/**
 * A supervisor (a test, systemd, Kubernetes) may send SIGTERM the moment it reads the ready line.
 * Until the command listens for signals, SIGTERM kills Node at once: no clean shutdown, no
 * `offline` record, no verdict. So every long-running command listens before it says it is ready.
 * Run in this process: when the ready line is written, the command must already listen for SIGTERM,
 * and the SIGTERM sent then stops it cleanly.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { startEmbeddedBroker, type InThreadBroker } from '../../src/broker/embedded-broker.js';

/** Runs the CLI; on its first stdout line, notes whether SIGTERM was listened for, then sends it. */
async function stopOnReadyLine(args: string[]): Promise<{ code: number; listening: boolean | undefined; stderr: string }> {
  const before = process.listenerCount('SIGTERM');
  let listening: boolean | undefined;
  let stderr = '';
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (listening === undefined && chunk.toString().includes('\n')) {
        listening = process.listenerCount('SIGTERM') > before;
        // What a supervisor does on reading the line (emitted, not sent: a real one with no listener
        // would kill this test's process). Later, so a command that listens too late still stops.
        setImmediate(() => process.emit('SIGTERM', 'SIGTERM'));
      }
      done();
    },
  });
  const stderrSink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      stderr += chunk.toString();
      done();
    },
  });
  const code = await runCli(args, { stdout, stderr: stderrSink });
  return { code, listening, stderr };
}

describe('the long-running commands listen for signals before their ready line', () => {
  let broker: InThreadBroker;
  beforeAll(async () => {
    broker = await startEmbeddedBroker({ port: 0 });
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it.each([
    ['broker', () => ['broker', '--mqtt-port', '0', '--json']],
    ['stations', () => ['stations', '--fixture', 'fixtures/ci.json', '--broker', broker.url, '--json']],
    ['api', () => ['api', '--fixture', 'fixtures/ci.json', '--broker', broker.url, '--http-port', '0', '--json']],
    ['up', () => ['up', '--fixture', 'fixtures/ci.json', '--mqtt-port', '0', '--http-port', '0', '--json']],
  ] as const)('%s', async (_name, args) => {
    const result = await stopOnReadyLine([...args()]);
    expect(result.listening).toBe(true);
    expect(result.stderr).toContain('SIGTERM received, shutting down');
    expect(result.code).toBe(0);
  }, 60_000);
});
