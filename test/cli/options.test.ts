/**
 * The CLI's shared options (src/cli/options.ts): each flag is checked by the rule of the library
 * option it sets (src/simulator/simulator-options.ts), so `station-sim` and `startSimulator` refuse
 * the same values; a refusal is a usage error (exit code 2) that names the flag. And the handlers
 * see their flags typed: a misspelt flag does not compile (the `@ts-expect-error` lines below fail
 * `tsc --noEmit`, the typecheck step of `npm test`, the day they compile).
 */
import { describe, expect, it } from 'vitest';
import yargs, { type ArgumentsCamelCase, type CommandModule } from 'yargs';
import { Writable } from 'node:stream';
import { FIXTURE_OPTIONS, HOST_OPTIONS, HTTP_OPTIONS, TIME_OPTIONS, type FlagsOf } from '../../src/cli/options.js';
import {
  brokerSecurityOptions,
  checked,
  heartbeatRateOption,
  httpOptions,
  brokerTlsOption,
  mqttVersionOf,
  seedOf,
  timeOptions,
} from '../../src/cli/option-checks.js';
import { UsageError, type CliIo } from '../../src/cli/output.js';
import { upCommand } from '../../src/cli/commands/up/command.js';
import type { UpFlags } from '../../src/cli/commands/up/options.js';
import { apiCommand } from '../../src/cli/commands/api/command.js';
import type { ApiFlags } from '../../src/cli/commands/api/options.js';
import { brokerCommand } from '../../src/cli/commands/broker/command.js';
import type { BrokerFlags } from '../../src/cli/commands/broker/options.js';
import { simulatorOptionProblem, type SimulatorOptions } from '../../src/simulator/simulator-options.js';
import { MAX_TIMER_MS } from '../../src/fixture/fixture-schema.js';
import { LOGGER_LIMITS, loggerOptionProblem } from '../../src/service/http/logger-settings.js';

/** What the CLI says of a bad value: the UsageError's message, or undefined when it takes the value. */
function usageProblem(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return error.message;
  }
}

describe('flags checked by the library rules', () => {
  // Each flag, the library option it sets, and how the CLI reads it.
  const flags: [string, keyof SimulatorOptions, (value: number) => unknown][] = [
    ['http-port', 'httpPort', (value) => httpOptions({ 'http-port': value }, {})],
    ['access-ttl', 'accessTokenTtlSeconds', (value) => httpOptions({ 'access-ttl': value }, {})],
    ['refresh-ttl', 'refreshTokenTtlSeconds', (value) => httpOptions({ 'refresh-ttl': value }, {})],
    ['session-max-lifetime', 'sessionMaxLifetimeSeconds', (value) => httpOptions({ 'session-max-lifetime': value }, {})],
    ['command-timeout', 'commandTimeoutMs', (value) => httpOptions({ 'command-timeout': value }, {})],
    ['broker-tls-port', 'brokerTlsPort', (value) => brokerSecurityOptions({ 'broker-tls-port': value })],
    ['broker-ws-port', 'brokerWsPort', (value) => brokerSecurityOptions({ 'broker-ws-port': value })],
    ['max-heartbeat-rate', 'maxHeartbeatRate', (value) => heartbeatRateOption({ 'max-heartbeat-rate': value })],
    ['time-scale', 'timeScale', (value) => timeOptions({ 'time-scale': value, clock: 'system', record: undefined })],
  ];
  const values = [-1, 0, 0.5, 1, 1.5, 80, 65_535, 65_536, MAX_TIMER_MS, MAX_TIMER_MS + 1, Number.NaN, Number.POSITIVE_INFINITY];

  it.each(flags)('--%s refuses exactly what %s refuses, naming the flag', (flag, option, read) => {
    for (const value of values) {
      const library = simulatorOptionProblem(option, value);
      const cli = usageProblem(() => read(value));
      expect({ value, cli }).toEqual({ value, cli: library ? `--${flag} must be ${library.wants}, not ${String(value)}` : undefined });
    }
  });

  it('refuses the --log-… counts the logger option refuses, echoing what was typed', () => {
    const cases: [string, 'maxFiles' | 'maxRequestsPerSecond', string][] = [
      ...['0', '1', '100', '101', '1.5', '-1', 'x', ' '].map((raw): [string, 'maxFiles', string] => ['log-files', 'maxFiles', raw]),
      ...['-1', '0', '50', '2.5', 'many'].map((raw): [string, 'maxRequestsPerSecond', string] => ['log-requests-per-second', 'maxRequestsPerSecond', raw]),
    ];
    for (const [flag, setting, raw] of cases) {
      const cli = usageProblem(() => httpOptions({ 'log-file': 'api.log', [flag]: raw }, {}));
      const library = loggerOptionProblem({ file: 'api.log', [setting]: raw.trim() === '' ? Number.NaN : Number(raw) });
      expect({ flag, raw, cli }).toEqual({ flag, raw, cli: library === undefined ? undefined : `--${flag} must be ${LOGGER_LIMITS[setting].wants}, not ${JSON.stringify(raw)}` });
    }
  });

  it('echoes a seed as it was typed, and refuses what the library refuses', () => {
    expect(seedOf({ seed: '42' })).toBe(42);
    expect(seedOf({ seed: undefined })).toBeUndefined();
    expect(usageProblem(() => seedOf({ seed: '1.5' }))).toBe('--seed must be a whole number from 0 to 2147483647, not "1.5"');
    expect(usageProblem(() => seedOf({ seed: ' ' }))).toBe('--seed must be a whole number from 0 to 2147483647, not " "');
    expect(usageProblem(() => seedOf({ seed: '2147483648' }))).toBe('--seed must be a whole number from 0 to 2147483647, not "2147483648"');
  });

  it('takes --mqtt-version 4 or 5, 5 only with --broker, echoing what was typed and refusing what the library refuses', () => {
    expect(mqttVersionOf({ 'mqtt-version': '4' })).toBe(4);
    expect(mqttVersionOf({ 'mqtt-version': '5', broker: 'mqtt://127.0.0.1:1' })).toBe(5);
    expect(mqttVersionOf({})).toBeUndefined();
    // '5.0' reads as 5, as the number the library is given would.
    for (const raw of ['3', '6', '5.0', 'five', ' ', '']) {
      const number = raw.trim() === '' ? Number.NaN : Number(raw);
      const library = simulatorOptionProblem('mqttVersion', number);
      expect({ raw, cli: usageProblem(() => mqttVersionOf({ 'mqtt-version': raw, broker: 'mqtt://127.0.0.1:1' })) }).toEqual({
        raw,
        cli: library === undefined ? undefined : `--mqtt-version must be ${library.wants}, not ${JSON.stringify(raw)}`,
      });
    }
    expect(simulatorOptionProblem('mqttVersion', 6)?.wants).toBe('4 (MQTT 3.1.1) or 5 (MQTT 5.0)');
    expect(usageProblem(() => mqttVersionOf({ 'mqtt-version': '5' }))).toBe(
      '--mqtt-version 5: MQTT 5 needs an external broker (--broker mqtt://host:port): the embedded broker speaks MQTT 3.1.1 only',
    );
    expect(brokerTlsOption({ 'mqtt-version': '5', broker: 'mqtt://127.0.0.1:1' })).toEqual({ mqttVersion: 5 });
    expect(brokerTlsOption({ broker: 'mqtt://127.0.0.1:1' })).toEqual({});
  });

  it('takes the values as SimulatorOptions fields, leaving out those not given', () => {
    expect(httpOptions({ 'http-port': 0, 'access-ttl': 60, 'command-timeout': 100, 'login-throttle': false }, {})).toEqual({
      httpPort: 0,
      fallbackToFreePort: false,
      accessTokenTtlSeconds: 60,
      commandTimeoutMs: 100,
      loginThrottle: false,
    });
    expect(Object.keys(httpOptions({}, {}))).toEqual(['httpPort', 'fallbackToFreePort']);
    expect(brokerSecurityOptions({ 'broker-auth': false, 'insecure-broker': false })).toEqual({ brokerAuth: false });
    expect(checked('mqtt-port', 'mqttPort', undefined)).toBeUndefined();
  });

  it('refuses a control plane open beyond loopback by the library rule, in flags', () => {
    expect(usageProblem(() => httpOptions({ host: '0.0.0.0' }, {}))).toMatch(/^--host 0\.0\.0\.0 lets other machines reach the control plane/);
    expect(usageProblem(() => httpOptions({ host: '0.0.0.0', 'control-token': '' }, {}))).toMatch(/^--host 0\.0\.0\.0/);
    expect(httpOptions({ host: '0.0.0.0' }, { STATION_SIM_CONTROL_TOKEN: 'secret' }).controlToken).toBe('secret');
    expect(httpOptions({ host: '0.0.0.0', 'insecure-control': true }, {}).insecureControl).toBe(true);
  });
});

describe('typed flags', () => {
  const OPTIONS = { ...FIXTURE_OPTIONS, ...HOST_OPTIONS, ...HTTP_OPTIONS, ...TIME_OPTIONS };

  it('parses one list of groups to the types it declares', async () => {
    const argv: FlagsOf<typeof OPTIONS> = await yargs(['--http-port', '0', '--clock', 'manual', '-f', 'ci']).options(OPTIONS).strict().parseAsync();
    const port: number | undefined = argv['http-port'];
    const clock: 'system' | 'manual' = argv.clock;
    const host: string = argv.host;
    expect({ port, clock, host, fixture: argv.fixture }).toEqual({ port: 0, clock: 'manual', host: '127.0.0.1', fixture: 'ci' });
  });

  it('does not compile a misspelt flag', async () => {
    const argv: FlagsOf<typeof OPTIONS> = await yargs(['--http-port', '1']).options(OPTIONS).parseAsync();
    const read = (flags: FlagsOf<typeof OPTIONS>): unknown[] => [
      // @ts-expect-error `--htp-port` is not an option
      flags['htp-port'],
      // @ts-expect-error a flag is read by its name, `clock`
      flags.clocks,
      flags['http-port'],
    ];
    expect(read(argv)).toEqual([undefined, undefined, 1]);
  });
});

/** What a command's own builder parses `args` to, as its handler is given it. */
async function parsedBy<U>(command: CommandModule<object, U>, args: string[]): Promise<ArgumentsCamelCase<U>> {
  const { builder } = command;
  if (typeof builder !== 'function') throw new Error(`${String(command.command)} declares no builder function`);
  return (await builder(yargs(args))).strict().parseAsync();
}

describe('typed commands', () => {
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const io: CliIo = { stdout: quiet, stderr: quiet };

  it('give each handler the flags of its own list, typed', async () => {
    const up: UpFlags = await parsedBy(upCommand(io), ['--mqtt-port', '0', '--dashboard', '--broker-ws-port', '9001']);
    const mqttPort: number | undefined = up['mqtt-port'];
    const dashboard: string | undefined = up.dashboard;
    const brokerThread: boolean = up['broker-thread'];
    expect({ mqttPort, dashboard, brokerThread, ws: up['broker-ws-port'] }).toEqual({ mqttPort: 0, dashboard: 'on', brokerThread: true, ws: 9001 });
    // @ts-expect-error a misspelt flag of `up` does not compile
    expect(up['mqtt-prot']).toBeUndefined();

    const api: ApiFlags = await parsedBy(apiCommand(io), ['--broker', 'mqtt://127.0.0.1:1', '--mqtt-version', '5']);
    const broker: string = api.broker;
    expect(broker).toBe('mqtt://127.0.0.1:1');
    const mqttVersion: string | undefined = api['mqtt-version'];
    expect(mqttVersion).toBe('5');
    // @ts-expect-error `api` has no embedded broker, so no --mqtt-port
    expect(api['mqtt-port']).toBeUndefined();

    const alone: BrokerFlags = await parsedBy(brokerCommand(io), ['--host', '::1']);
    expect(alone.host).toBe('::1');
    // @ts-expect-error the broker alone serves no HTTP
    expect(alone['http-port']).toBeUndefined();
  });

  it('hold a helper to the flags it reads', () => {
    // @ts-expect-error `--broker-tls-prot` is not a flag of the embedded broker's security
    expect(brokerSecurityOptions({ 'broker-tls-prot': 8883 })).toEqual({});
    // @ts-expect-error a flag's value has the type its option declares
    expect(() => heartbeatRateOption({ 'max-heartbeat-rate': '5' })).toThrow('--max-heartbeat-rate must be a number of at least 0 (0: no cap), not "5"');
  });
});
