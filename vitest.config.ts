import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** The files run one at a time, after the rest (see `projects`). */
export const ALONE = [
  'test/brokers/**/*.test.ts',
  'test/bench/**/*.test.ts',
  'test/fleet/link-conditions.test.ts',
  'test/dashboard/tmux-smoke.test.ts',
  'test/demo/demo-tmux.test.ts',
];

/**
 * The files that start no process, open no socket and listen on no port: pure logic, fake clocks,
 * fastify's `inject()`. They run first, two at a time, so a broken model fails the run in a minute
 * (test/helpers/unit-guard.ts fails a file here that starts a process or opens a socket: move it
 * to `parallel` by taking it off this list). A new file is in `parallel` until it is listed here.
 */
export const UNIT = [
  'test/architecture/test-projects.test.ts',
  'test/broker/station-watch.test.ts',
  'test/cli/broker-credentials.test.ts',
  'test/cli/broker-notices.test.ts',
  'test/cli/control-access.test.ts',
  'test/cli/run-until-signal.test.ts',
  'test/client/event-iterator.test.ts',
  'test/client/live-fleet.test.ts',
  'test/contract/iso-timestamps.test.ts',
  'test/control/event-hub.test.ts',
  'test/control/fleet-readiness-counts.test.ts',
  'test/control/lock-phase-events.test.ts',
  'test/control/scenario-runner.test.ts',
  'test/dashboard/activity-log.test.ts',
  'test/dashboard/dashboard-keys.test.ts',
  'test/dashboard/fault-menu.test.tsx',
  'test/dashboard/fleet-store.test.ts',
  'test/dashboard/key-chunks.test.ts',
  'test/dashboard/log-lines.test.ts',
  'test/dashboard/screen.test.tsx',
  'test/dashboard/simulator-time.test.ts',
  'test/demo/caption.test.tsx',
  'test/demo/demo-pacer.test.ts',
  'test/errors.test.ts',
  'test/fixture/load-fixture.test.ts',
  'test/fixture/mqtt-identities.test.ts',
  'test/judge/client-judge.test.ts',
  'test/judge/junit-report.test.ts',
  'test/judge/rule-catalogue.test.ts',
  'test/judge/service-judge-bounds.test.ts',
  'test/judge/service-judge.test.ts',
  'test/mqtt/identity.test.ts',
  'test/mqtt/packet-codec.test.ts',
  'test/mqtt/plausibility.test.ts',
  'test/packaging/engines.test.ts',
  'test/service/auth/access-tokens.test.ts',
  'test/service/auth/account-directory.test.ts',
  'test/service/auth/auth-flows.test.ts',
  'test/service/auth/hash-limiter.test.ts',
  'test/service/auth/login-throttle.test.ts',
  'test/service/auth/login-throttling.test.ts',
  'test/service/gateway/pending-commands.test.ts',
  'test/service/gateway/station-state-cache.test.ts',
  'test/service/gateway/topic-router.test.ts',
  'test/service/gateway/unlock-outcome.test.ts',
  'test/service/http/error-responses.test.ts',
  'test/service/http/openapi-document.test.ts',
  'test/service/http/openapi.test.ts',
  'test/service/http/request-sampler.test.ts',
  'test/shared/clock.test.ts',
  'test/station/faults-and-physical.test.ts',
  'test/station/lock-phase.test.ts',
  'test/station/random.test.ts',
  'test/station/station-model.test.ts',
  'test/transcript/judge-entries.test.ts',
  'test/transcript/rejudge-check.test.ts',
  'test/transcript/transcript-format.test.ts',
  'test/transcript/transcript-reader.test.ts',
];

export default defineConfig({
  // The examples import the package by name, as a user's project does; here the name is the
  // sources (test/packaging/consumer-install.test.ts runs them against the installed package).
  resolve: {
    alias: [
      { find: /^station-sim$/, replacement: source('./src/index.ts') },
      { find: /^station-sim\/client$/, replacement: source('./src/client/index.ts') },
      { find: /^station-sim\/testing$/, replacement: source('./src/testing/index.ts') },
    ],
  },
  test: {
    // Every file is in exactly one project: `parallel` takes what the two lists leave
    // (test/architecture/test-projects.test.ts checks the unit list).
    projects: [
      // Pure computation: one worker per core. Not isolated: the files of a worker share one module
      // graph (16 s for the project instead of 43 s, most of it loading the same modules again), so a
      // unit file leaves nothing behind: fake timers and mocks restored, no module state changed.
      { extends: true, test: { name: 'unit', include: UNIT, exclude: ALONE, maxWorkers: 2, isolate: false, setupFiles: ['test/helpers/unit-guard.ts'], sequence: { groupOrder: 0 } } },
      // Most files wait on sockets, child processes and timers far more than they compute: three
      // at a time on two cores (vitest's default is one fewer worker than cores, one here). Not
      // isolated either: loading the same modules again in each file was a fifth of this
      // project's CPU. So a file here stops what it starts and restores what it changes (timers,
      // stubbed variables); judge-setup.ts resets its per-file state at the start of each file.
      { extends: true, test: { name: 'parallel', include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'examples/**/*.test.ts'], exclude: [...UNIT, ...ALONE], maxWorkers: 3, isolate: false, sequence: { groupOrder: 1 } } },
      // Files whose subject is timing under a broker's keepalive, a shaped link, a terminal's
      // repaint or the hot path's cost: after the others, one at a time.
      { extends: true, test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 2 } } },
    ],
    // Tests that start real processes and brokers need more than the 5 s default on a loaded 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The judge is on in every simulator a test starts; a file whose simulators broke a rule fails
    // unless it says it does so on purpose (test/helpers/judge-findings.ts).
    // STATION_SIM_TEST_CPU=<file> reports what each file costs (test/helpers/cpu-report.ts).
    setupFiles: ['test/helpers/judge-setup.ts', ...(process.env.STATION_SIM_TEST_CPU ? ['test/helpers/cpu-report.ts'] : [])],
    // The CLI the tests start is the compiled one, built once here when src/ changed after it.
    globalSetup: ['test/helpers/build-once.ts'],
  },
});
