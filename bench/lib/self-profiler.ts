/**
 * CPU profiling of a child's own thread on request, through the in-process inspector (the same V8
 * sampling profiler as `node --cpu-prof`, which can only profile a whole process life). The
 * harness calls `profile-start` when the load starts and `profile-stop` when it ends, so the profile
 * holds the load and not the start-up.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { ChildMethod } from './ipc.js';

export function selfProfilerMethods(): Record<string, ChildMethod> {
  let session: Session | undefined;
  return {
    'profile-start': async () => {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      // The interval of `node --cpu-prof` (its default, 1000 µs).
      await session.post('Profiler.setSamplingInterval', { interval: 1000 });
      await session.post('Profiler.start');
    },
    'profile-stop': async (params) => {
      if (!session) throw new Error('profile-start was not called');
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      session = undefined;
      const file = (params as { file: string }).file;
      writeFileSync(file, JSON.stringify(profile));
      return { file };
    },
  };
}
