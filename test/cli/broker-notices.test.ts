/**
 * What a long-running command says about its broker: one line when it is lost, one when it is
 * back with how long it was gone, once per outage; and one line, once, when a station of the
 * process is run by another process too.
 */
import { describe, expect, it } from 'vitest';
import { BrokerNotices, formatDuration, watchConnection, watchFleet, type WatchedStation } from '../../src/cli/broker-notices.js';
import type { ConnectionListener } from '../../src/control/control-channel.js';
import type { StationLinkEvent } from '../../src/mqtt/station-client.js';

class FakeStation implements WatchedStation {
  sessionUp = true;
  readonly #listeners = new Set<(event: StationLinkEvent) => void>();
  constructor(readonly token: string) {}
  onLinkEvent(listener: (event: StationLinkEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  emit(event: StationLinkEvent): void {
    if (event.kind === 'up') this.sessionUp = true;
    if (event.kind === 'down') this.sessionUp = false;
    for (const listener of this.#listeners) listener(event);
  }
}

function setup(): { lines: string[]; time: { now: number }; notices: BrokerNotices } {
  const lines: string[] = [];
  const time = { now: 1_000 };
  const notices = new BrokerNotices({ broker: 'mqtt://***@127.0.0.1:1884', notify: (line) => lines.push(line), meanwhile: 'the stations keep reconnecting', now: () => time.now });
  return { lines, time, notices };
}

describe('fleet notices (stations)', () => {
  it('one line when the broker is lost, one when it is back, however many stations and retries', () => {
    const { lines, time, notices } = setup();
    const stations = [new FakeStation('A'), new FakeStation('B')];
    const stop = watchFleet(stations, notices, (line) => lines.push(line));
    for (const station of stations) station.emit({ kind: 'down', deliberate: false });
    time.now += 500;
    for (let attempt = 0; attempt < 5; attempt += 1) for (const station of stations) station.emit({ kind: 'retryFailed', reason: 'connect ECONNREFUSED 127.0.0.1:1884' });
    time.now += 7_700;
    stations[0]!.emit({ kind: 'up' });
    stations[1]!.emit({ kind: 'up' });
    expect(lines).toEqual([
      'lost the MQTT broker at mqtt://***@127.0.0.1:1884 (connect ECONNREFUSED 127.0.0.1:1884); the stations keep reconnecting',
      'the MQTT broker at mqtt://***@127.0.0.1:1884 is back after 8.2 s',
    ]);
    // A second outage is said again.
    stations[0]!.emit({ kind: 'down', deliberate: false });
    stations[1]!.emit({ kind: 'down', deliberate: false });
    stations[0]!.emit({ kind: 'retryFailed', reason: 'connack timeout' });
    expect(lines).toHaveLength(3);
    stop();
  });

  it('says nothing while another station still has its session, or when stations go offline on purpose', () => {
    const { lines, notices } = setup();
    const stations = [new FakeStation('A'), new FakeStation('B')];
    watchFleet(stations, notices, (line) => lines.push(line));
    stations[0]!.emit({ kind: 'down', deliberate: false });
    stations[0]!.emit({ kind: 'retryFailed', reason: 'connection closed' });
    stations[1]!.emit({ kind: 'down', deliberate: true });
    stations[0]!.emit({ kind: 'up' });
    expect(lines).toEqual([]);
  });

  it('says once per process that a station may be run twice (or the broker restarted), naming it and its client id', () => {
    const { lines, notices } = setup();
    const stations = [new FakeStation('CI-1'), new FakeStation('CI-2')];
    watchFleet(stations, notices, (line) => lines.push(line));
    for (const station of stations) {
      for (let close = 0; close < 3; close += 1) {
        station.emit({ kind: 'down', deliberate: false });
        station.emit({ kind: 'up' });
      }
      station.emit({ kind: 'takenOver', token: station.token, clientId: `station-sim-${station.token}`, closes: 3 });
    }
    expect(lines).toHaveLength(1);
    // The fact first, then both possible causes: a broker restarted three times in quick
    // succession closes sessions soon after accepting them too, and used to be taken for a twin.
    expect(lines[0]).toMatch(/^the broker closed station CI-1's session \(client id station-sim-CI-1\) soon after accepting it, 3 times in a row: another process may run it too .*do --shard values overlap\?.*, or the broker restarted;/);
  });
});

describe('refusal notices (stations)', () => {
  it('one line per station and cause, however often the broker refuses it, and none for the loss while others are up', () => {
    const { lines, notices } = setup();
    const stations = [new FakeStation('CI-1'), new FakeStation('CI-2'), new FakeStation('CI-3')];
    watchFleet(stations, notices, (line) => lines.push(line));
    const refuse = (station: FakeStation, cause: string) => {
      station.emit({ kind: 'retryFailed', reason: 'whatever' });
      station.emit({ kind: 'refused', token: station.token, clientId: `station-sim-${station.token}`, cause });
    };
    stations[0]!.emit({ kind: 'down', deliberate: false });
    stations[1]!.emit({ kind: 'down', deliberate: false });
    for (let attempt = 0; attempt < 14; attempt += 1) {
      refuse(stations[0]!, 'its client certificate was refused (TLS alert: certificate revoked)');
      refuse(stations[1]!, 'bad username or password (CONNACK 4)');
    }
    refuse(stations[1]!, 'not authorized (CONNACK 5)');
    expect(lines).toEqual([
      'the broker refused station CI-1 (client id station-sim-CI-1): its client certificate was refused (TLS alert: certificate revoked); it keeps retrying, backing off',
      'the broker refused station CI-2 (client id station-sim-CI-2): bad username or password (CONNACK 4); it keeps retrying, backing off',
      'the broker refused station CI-2 (client id station-sim-CI-2): not authorized (CONNACK 5); it keeps retrying, backing off',
    ]);
  });
});

describe('connection notices (api, up --broker)', () => {
  it('one line on loss and one on return, from the control channel', () => {
    const { lines, time, notices } = setup();
    let listener: ConnectionListener | undefined;
    watchConnection({ onConnectionChange: (added) => ((listener = added), () => undefined) }, notices);
    listener!(false);
    time.now += 192_400;
    listener!(true);
    expect(lines).toEqual([
      'lost the MQTT broker at mqtt://***@127.0.0.1:1884; the stations keep reconnecting',
      'the MQTT broker at mqtt://***@127.0.0.1:1884 is back after 3 min 12 s',
    ]);
  });

  it('formats durations', () => {
    expect([formatDuration(0), formatDuration(59_940), formatDuration(60_000), formatDuration(3_725_000)]).toEqual(['0.0 s', '59.9 s', '1 min 0 s', '62 min 5 s']);
  });
});
