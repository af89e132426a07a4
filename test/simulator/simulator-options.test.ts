/**
 * The library API refuses options the CLI and the fixture schema refuse, naming the option, before
 * it starts anything.
 */
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/index.js';
import { startApiProcess, type SimulatorOptions } from '../../src/simulator/start-simulator.js';
import { resolveFixture } from '../../src/simulator/resolve-fixture.js';
import { MAX_TIMER_MS } from '../../src/fixture/fixture-schema.js';

const CLOCK_WANTS = 'clock must be "system", "manual" or a Clock (now, setTimeout, clearTimeout)';

/** Options as plain JavaScript (or values read from the environment) may pass them. */
const refused: [string, unknown, string][] = [
  ['a fixture path in place of the options', 'fixtures/ci.json', 'startSimulator takes an options object, not a string: for a fixture file, startSimulator({ fixture: "fixtures/ci.json" })'],
  ['null options', null, 'startSimulator takes an options object (or nothing), not null'],
  ['a misspelt option', { fixure: 'ci' }, 'startSimulator has no option "fixure"; it takes '],
  ['a number for the fixture', { fixture: 123 }, 'fixture must be the name of a shipped fixture ("demo", "ci"), a fixture file path, or fixture data (an object), not 123'],
  ['null for the fixture', { fixture: null }, 'fixture must be the name of a shipped fixture ("demo", "ci"), a fixture file path, or fixture data (an object), not null'],
  ['a seed as a string', { seed: '7' }, 'seed must be a whole number from 0 to 2147483647, not "7"'],
  ['a negative HTTP port', { httpPort: -1 }, 'httpPort must be a whole number from 0 to 65535, not -1'],
  ['an HTTP port past 65535', { httpPort: 70_000 }, 'httpPort must be a whole number from 0 to 65535, not 70000'],
  ['a fractional HTTP port', { httpPort: 1.5 }, 'httpPort must be a whole number from 0 to 65535, not 1.5'],
  ['an MQTT port as a string', { mqttPort: 'abc' }, 'mqttPort must be a whole number from 0 to 65535, not "abc"'],
  ['an access token lifetime of 0', { accessTokenTtlSeconds: 0 }, 'accessTokenTtlSeconds must be a whole number of at least 1, not 0'],
  ['an access token lifetime as a string', { accessTokenTtlSeconds: '60' }, 'accessTokenTtlSeconds must be a whole number of at least 1, not "60"'],
  ['a fractional refresh token lifetime', { refreshTokenTtlSeconds: 1.5 }, 'refreshTokenTtlSeconds must be a whole number of at least 1, not 1.5'],
  ['a fractional session lifetime', { sessionMaxLifetimeSeconds: 2.5 }, 'sessionMaxLifetimeSeconds must be a whole number of at least 1, not 2.5'],
  ['a state that is not a Redis URL (not echoed: it may carry a password)', { state: 'http://:pw@host' }, 'state must be a Redis URL, redis://[:password@]host[:port][/db] or rediss://… for TLS'],
  ['a command timeout as a string', { commandTimeoutMs: 'x' }, `commandTimeoutMs must be a whole number from 1 to ${MAX_TIMER_MS}, not "x"`],
  ['a command timeout past the longest timer', { commandTimeoutMs: MAX_TIMER_MS + 1 }, `commandTimeoutMs must be a whole number from 1 to ${MAX_TIMER_MS}, not ${MAX_TIMER_MS + 1}`],
  ['a broker as a number (not echoed: a URL may carry credentials)', { broker: 1883 }, 'broker must be a broker URL (mqtt://host:port)'],
  ['a control token as a number (not echoed)', { controlToken: 123456 }, 'controlToken must be a non-empty string of the characters A-Z a-z 0-9 - . _ ~ + / (and = at the end), as a Bearer credential allows (leave it out for no token)'],
  // DESIGN.md, trust model: beyond loopback the control plane needs its token, or an explicit opt-out.
  ['a control plane open beyond loopback', { host: '0.0.0.0' }, 'host "0.0.0.0" lets other machines reach the control plane, which opens any lock and resets the fleet: give controlToken, or insecureControl: true'],
  ['insecureControl not a boolean', { insecureControl: 'yes' }, 'insecureControl must be true or false'],
  ['a control token no Bearer header can carry (not echoed)', { controlToken: 'open sesame' }, 'controlToken must be a non-empty string of the characters A-Z a-z 0-9 - . _ ~ + / (and = at the end), as a Bearer credential allows (leave it out for no token)'],
  ['a time scale as a string', { timeScale: '2' }, 'timeScale must be a positive number, not "2"'],
  ['a time scale of infinity', { timeScale: Infinity }, 'timeScale must be a positive number, not Infinity'],
  ['a misspelt clock', { clock: 'manuall' }, `${CLOCK_WANTS}, not "manuall"`],
  ['a clock without its methods', { clock: { now: () => 0 } }, `${CLOCK_WANTS}, not an object`],
];

describe('startSimulator options', () => {
  it.each(refused)('refuses %s with BAD_REQUEST naming the option, having started nothing', async (_, options, message) => {
    const before = process.getActiveResourcesInfo();
    const error = await startSimulator(options as SimulatorOptions).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toMatchObject({ name: 'SimError', code: 'BAD_REQUEST', statusCode: 400 });
    expect((error as Error).message.startsWith(message), (error as Error).message).toBe(true);
    expect(process.getActiveResourcesInfo()).toEqual(before);
  });

  it('never shows a control token or a broker URL it refuses', async () => {
    await expect(startSimulator({ controlToken: { secret: 'sesame' } } as never)).rejects.not.toThrow(/sesame/);
    await expect(startSimulator({ broker: ['mqtt://user:hunter2@host'] } as never)).rejects.not.toThrow(/hunter2/);
    await expect(startSimulator({ state: 'mysql://user:hunter2@host' })).rejects.not.toThrow(/hunter2/);
  });

  it('takes an option set to undefined as one left out', async () => {
    const fixture = { stations: [{ token: 'U-1', stationId: 1, locks: [{ lockId: '1' }] }] };
    const sim = await startSimulator({ fixture, seed: undefined, broker: undefined, clock: undefined, http: false });
    try {
      expect(sim.fleet.stations.size).toBe(1);
    } finally {
      await sim.stop();
    }
  });

  it('refuses a fixture of the wrong type in resolveFixture too', async () => {
    await expect(resolveFixture(123 as never)).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/^fixture must be .*, not 123$/) });
  });

  it('refuses, for startApiProcess, an option only startSimulator has', async () => {
    await expect(startApiProcess({ broker: 'mqtt://127.0.0.1:1', seed: 7 } as never)).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/^startApiProcess has no option "seed"; it takes /),
    });
  });
});
