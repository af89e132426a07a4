/** The bound on password checks running at once, with tasks the test settles by hand. */
import { expect, test } from 'vitest';
import { RetryLaterError } from '../../../src/errors.js';
import { HashLimiter } from '../../../src/service/auth/hash-limiter.js';

function deferred(): { promise: Promise<string>; resolve: (value: string) => void } {
  let resolve!: (value: string) => void;
  const promise = new Promise<string>((settle) => (resolve = settle));
  return { promise, resolve };
}

test('runs at most `concurrency` tasks at once, the rest in order, and refuses past maxQueued at once', async () => {
  const limiter = new HashLimiter({ concurrency: 2, maxQueued: 2 });
  const tasks = Array.from({ length: 4 }, deferred);
  const started: number[] = [];
  const results = tasks.map((task, index) =>
    limiter.run(async () => {
      started.push(index);
      return task.promise;
    }),
  );
  await Promise.resolve();
  expect(started).toEqual([0, 1]);
  expect(limiter.stats).toMatchObject({ running: 2, queued: 2 });

  const refused = limiter.run(async () => 'never');
  await expect(refused).rejects.toBeInstanceOf(RetryLaterError);
  await expect(refused).rejects.toMatchObject({ code: 'LOGIN_BUSY', statusCode: 503, retryAfterSeconds: 1 });

  tasks[1]!.resolve('b');
  await expect(results[1]).resolves.toBe('b');
  await Promise.resolve();
  expect(started).toEqual([0, 1, 2]);
  tasks[0]!.resolve('a');
  tasks[2]!.resolve('c');
  tasks[3]!.resolve('d');
  await expect(Promise.all(results)).resolves.toEqual(['a', 'b', 'c', 'd']);
  expect(limiter.stats).toEqual({ running: 0, queued: 0, started: 4, refused: 1, peakRunning: 2 });
});

test('a task that throws frees its slot', async () => {
  const limiter = new HashLimiter({ concurrency: 1, maxQueued: 0 });
  await expect(limiter.run(async () => Promise.reject(new Error('scrypt failed')))).rejects.toThrow('scrypt failed');
  await expect(limiter.run(async () => 'next')).resolves.toBe('next');
  expect(limiter.stats.running).toBe(0);
});

test('a task that is not suspect waits ahead of suspect ones, and takes the place of the newest in a full line', async () => {
  const limiter = new HashLimiter({ concurrency: 1, maxQueued: 2 });
  const order: string[] = [];
  const running = deferred();
  const first = limiter.run(async () => running.promise);
  const task = (name: string) => async () => {
    order.push(name);
    return name;
  };
  const flood1 = limiter.run(task('flood-1'), true);
  const flood2 = limiter.run(task('flood-2'), true);
  // Line full: a suspect newcomer is refused at once, a clean one bumps the newest suspect.
  await expect(limiter.run(task('flood-3'), true)).rejects.toMatchObject({ code: 'LOGIN_BUSY' });
  const clean = limiter.run(task('clean'));
  await expect(flood2).rejects.toMatchObject({ code: 'LOGIN_BUSY' });
  running.resolve('first');
  await expect(Promise.all([first, clean, flood1])).resolves.toEqual(['first', 'clean', 'flood-1']);
  expect(order).toEqual(['clean', 'flood-1']);
  expect(limiter.stats).toMatchObject({ started: 3, refused: 2 });
});
