/**
 * CPU profiling of a child's threads on request, through the in-process inspector (the same V8
 * sampling profiler as `node --cpu-prof`, which can only profile a whole process life). The
 * harness calls `profile-start` when the load starts and `profile-stop` when it ends, so the profile
 * holds the load and not the start-up. Worker threads (the embedded broker's, broker-thread.ts) are
 * profiled too, through the inspector's NodeWorker domain: each gets its own profile file.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { ChildMethod } from './ipc.js';

/** The interval of `node --cpu-prof` (its default, 1000 µs). */
const SAMPLING_INTERVAL_US = 1000;

/** What `profile-stop` answers: the main thread's profile, and one per worker thread. */
export interface ProfileFiles {
  file: string;
  workers: { file: string; title: string }[];
}

export function selfProfilerMethods(): Record<string, ChildMethod> {
  let session: Session | undefined;
  let workers: WorkerSessions | undefined;
  return {
    'profile-start': async () => {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
      workers = await WorkerSessions.attach(session);
      await session.post('Profiler.start');
      await workers.each(async (call) => {
        await call('Profiler.enable');
        await call('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
        await call('Profiler.start');
      });
    },
    'profile-stop': async (params): Promise<ProfileFiles> => {
      if (!session || !workers) throw new Error('profile-start was not called');
      const file = (params as { file: string }).file;
      const { profile } = await session.post('Profiler.stop');
      const written: ProfileFiles = { file, workers: [] };
      await workers.each(async (call, title, index) => {
        const stopped = (await call('Profiler.stop')) as { profile: unknown };
        const workerFile = file.replace(/(\.cpuprofile)?$/, `.worker-${index + 1}.cpuprofile`);
        writeFileSync(workerFile, JSON.stringify(stopped.profile));
        written.workers.push({ file: workerFile, title });
      });
      session.disconnect();
      session = undefined;
      workers = undefined;
      writeFileSync(file, JSON.stringify(profile));
      return written;
    },
  };
}

type WorkerCall = (method: string, params?: object) => Promise<unknown>;

/** The worker threads of this process, reached through the main thread's inspector session. */
class WorkerSessions {
  readonly #session: Session;
  readonly #attached: { sessionId: string; title: string }[] = [];
  readonly #waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  #nextId = 1;

  private constructor(session: Session) {
    this.#session = session;
    session.on('NodeWorker.attachedToWorker', (message) => {
      const { sessionId, workerInfo } = (message as unknown as { params: { sessionId: string; workerInfo: { title: string; url: string } } }).params;
      // Node's own module-loader threads (tsx's hooks run there) are not the simulator's.
      if (workerInfo.url.startsWith('node:internal/')) return;
      const title = workerInfo.url === '' || workerInfo.url.includes('broker-worker') ? 'embedded broker' : workerInfo.title;
      this.#attached.push({ sessionId, title });
    });
    session.on('NodeWorker.receivedMessageFromWorker', (message) => {
      const reply = JSON.parse((message as unknown as { params: { message: string } }).params.message) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = reply.id === undefined ? undefined : this.#waiting.get(reply.id);
      if (!waiter) return;
      this.#waiting.delete(reply.id!);
      if (reply.error) waiter.reject(new Error(reply.error.message));
      else waiter.resolve(reply.result);
    });
  }

  /** Attaches to every worker running now (the inspector reports them as soon as the domain is on). */
  static async attach(session: Session): Promise<WorkerSessions> {
    const workers = new WorkerSessions(session);
    await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await new Promise((resolve) => setTimeout(resolve, 50));
    return workers;
  }

  async each(action: (call: WorkerCall, title: string, index: number) => Promise<void>): Promise<void> {
    await Promise.all(this.#attached.map(({ sessionId, title }, index) => action((method, params = {}) => this.#call(sessionId, method, params), title, index)));
  }

  #call(sessionId: string, method: string, params: object): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      void this.#session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) });
    });
  }
}
