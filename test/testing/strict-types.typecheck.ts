/**
 * Type-level checks, compiled by `npm run typecheck` (`tsc --noEmit` with the project's strict
 * tsconfig) and never run: the helper's URLs are strings, so `createClient({ baseUrl: sim().apiUrl, ...account })`
 * compiles (issue 18, item 12), and so does `startSimulator`'s unless `http` may be `false`. Each
 * `@ts-expect-error` fails the type-check if the error it expects goes away.
 */
import { after, before, beforeEach } from 'node:test';
import { afterAll, beforeAll } from 'vitest';
import { createClient, type LockStateEvent, type StationSimClient } from '../../src/client/index.js';
import { startSimulator } from '../../src/index.js';
import { withSimulator, type TestSimulator } from '../../src/testing/index.js';

const account = { email: 'ci@example.com', password: 'ci-password' };

export function nodeTestSuite(): StationSimClient {
  const sim = withSimulator({ before, after, beforeEach }, { fixture: 'ci' });
  return createClient({ baseUrl: sim().apiUrl, ...account });
}

export function vitestSuite(): StationSimClient {
  const sim = withSimulator({ beforeAll, afterAll }, { fixture: 'ci' });
  const { controlUrl, mqttUrl }: { controlUrl: string; mqttUrl: string } = sim();
  void controlUrl;
  void mqttUrl;
  return createClient({ baseUrl: sim().apiUrl, ...account });
}

export async function library(): Promise<void> {
  const started = await startSimulator({ fixture: 'ci' });
  createClient({ baseUrl: started.apiUrl, ...account });
  const controlUrl: string = started.controlUrl;
  void controlUrl;
  const headless = await startSimulator({ fixture: 'ci', http: false });
  // @ts-expect-error: without the HTTP side there may be no apiUrl.
  createClient({ baseUrl: headless.apiUrl, ...account });
  const unknown = await startSimulator({ fixture: 'ci', http: Math.random() > 0.5 });
  // @ts-expect-error: `http` may be false.
  createClient({ baseUrl: unknown.apiUrl, ...account });
}

export async function events(sim: TestSimulator): Promise<void> {
  // The filter's type narrows what the iterator yields.
  for await (const event of sim.events({ type: 'lock.state', token: 'CI-1' })) {
    const typed: LockStateEvent = event;
    void typed;
    break;
  }
  // @ts-expect-error: not an event type.
  sim.events({ type: 'lock.opened' });
}
