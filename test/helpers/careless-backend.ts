/**
 * A simulator recording a transcript, a control client on it, and a backend publishing by hand as
 * client `careless-backend`: the setup of the tests of what only the broker and the fleet's agent
 * see (test/judge/broker-seen-misdeeds.test.ts, test/judge/undelivered-commands.test.ts). The
 * backend's misdeeds are judged live; `rejudge()` judges the transcript again offline.
 */
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { ControlClient } from '../../src/client/index.js';
import type { SimulatorOptions } from '../../src/simulator/simulator-options.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { judgeTranscript, type ReplayResult } from '../../src/transcript/transcript-judge.js';
import { TranscriptReader } from '../../src/transcript/transcript-reader.js';

export interface StartedCarelessBackend {
  readonly sim: StartedSimulator<true>;
  /** The transcript's path; complete once `stop()` returned. */
  readonly transcript: string;
  readonly control: ControlClient;
  /** Connected as `careless-backend`, without reconnecting. */
  readonly backend: MqttClient;
  /** Ends the backend and stops the simulator; the second call does nothing. */
  stop(): Promise<void>;
  /** Stops, then judges the transcript offline. */
  rejudge(): Promise<ReplayResult>;
  /** Stops, and removes the transcript's directory. */
  remove(): Promise<void>;
}

/** Starts the simulator with `options` (recording, with its HTTP planes), then the control client and the backend. */
export async function startCarelessBackend(options: Omit<SimulatorOptions, 'record' | 'http'>): Promise<StartedCarelessBackend> {
  const dir = mkdtempSync(join(tmpdir(), 'careless-backend-'));
  const transcript = join(dir, 'run.jsonl');
  const sim = await startSimulator({ ...options, record: transcript });
  const control = new ControlClient({ url: sim.controlUrl });
  const backend = await mqtt.connectAsync(sim.mqttUrl, { clientId: 'careless-backend', reconnectPeriod: 0 });
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= backend.endAsync().then(() => sim.stop()));
  return {
    sim,
    transcript,
    control,
    backend,
    stop,
    rejudge: async () => {
      await stop();
      return judgeTranscript(new TranscriptReader(createReadStream(transcript)));
    },
    remove: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
