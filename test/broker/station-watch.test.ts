/**
 * The embedded broker's station watch (src/broker/station-watch.ts) on its own: which PUBLISHes are
 * misdeeds, by topic, retain flag and publisher, for the default templates and for a fixture whose
 * templates put the token elsewhere.
 */
import { describe, expect, it } from 'vitest';
import { StationWatch, type StationWatchSpec } from '../../src/broker/station-watch.js';
import { DEFAULT_TOPICS, StationTopics, type Topics } from '../../src/contract/topics.js';
import { SIM_TOPICS } from '../../src/contract/sim-topics.js';

const CUSTOM: Topics = { ...DEFAULT_TOPICS, prefix: 'site/a', status: '{prefix}/status/{token}', acks: '{prefix}/{token}-acks' };
const SPEC: StationWatchSpec = {
  templates: [DEFAULT_TOPICS, CUSTOM],
  stations: [
    { token: 'A', templates: 0, fleet: true },
    { token: 'OTHER-SHARD', templates: 0, fleet: false },
    { token: 'C', templates: 1, fleet: true },
  ],
  clientId: 'station-sim-{token}',
};
const byDefault = new StationTopics(DEFAULT_TOPICS);
const custom = new StationTopics(CUSTOM);
const payload = Buffer.from('{"commandId":"c-1","sentAt":"2026-01-01T00:00:00.000Z"}');
const backend = { id: 'backend' };
const stationA = { id: 'station-sim-A' };

function classify(topic: string, client: { id: string } | null, retain = false, body: Buffer = payload) {
  return new StationWatch(SPEC).classify({ topic, payload: body, retain }, client)?.kind;
}

describe('the station watch', () => {
  it("passes a backend's ordinary command, the simulator's own topics and the broker's own messages", () => {
    expect(classify(byDefault.topic('unlock', { token: 'A', lockId: '1' }), backend)).toBeUndefined();
    expect(classify(byDefault.topic('unlock', { token: 'OTHER-SHARD', lockId: '1' }), backend)).toBeUndefined();
    expect(classify(SIM_TOPICS.events('A'), backend)).toBeUndefined();
    expect(classify(byDefault.topic('status', { token: 'A' }), null)).toBeUndefined();
  });

  it('passes a station publishing (or leaving as its will) its own status, lock states and acks', () => {
    for (const topic of [byDefault.topic('status', { token: 'A' }), byDefault.topic('lockState', { token: 'A', lockId: '1' }), byDefault.topic('acks', { token: 'A' })]) {
      expect(classify(topic, stationA, true)).toBeUndefined();
    }
    expect(classify(custom.topic('status', { token: 'C' }), { id: 'station-sim-C' }, true)).toBeUndefined();
    expect(classify(custom.topic('acks', { token: 'C' }), { id: 'station-sim-C' })).toBeUndefined();
  });

  it('finds a command to a station no template set has', () => {
    expect(classify(byDefault.topic('unlock', { token: 'ST-9999', lockId: '1' }), backend)).toBe('unknown-station');
    // C exists, but under the other templates: nobody listens here.
    expect(classify(byDefault.topic('unlock', { token: 'C', lockId: '1' }), backend)).toBe('unknown-station');
    expect(classify(custom.topic('unlock', { token: 'C', lockId: '1' }), backend)).toBeUndefined();
  });

  it('takes a station of another fixture on the same broker, known by its client id, for one that exists', () => {
    const watch = new StationWatch(SPEC);
    const command = { topic: byDefault.topic('unlock', { token: 'ELSEWHERE', lockId: '1' }), payload, retain: false };
    expect(watch.classify(command, backend)?.kind).toBe('unknown-station');
    expect(watch.classify({ topic: byDefault.topic('status', { token: 'ELSEWHERE' }), payload: '{}', retain: true }, { id: 'station-sim-ELSEWHERE' })).toBeUndefined();
    expect(watch.classify(command, backend)).toBeUndefined();
  });

  it("finds a command published retained to the fleet's station, not its clearing nor one to another shard's", () => {
    expect(classify(byDefault.topic('unlock', { token: 'A', lockId: '1' }), backend, true)).toBe('retained-command');
    expect(classify(byDefault.topic('unlock', { token: 'A', lockId: '1' }), backend, true, Buffer.alloc(0))).toBeUndefined();
    expect(classify(byDefault.topic('unlock', { token: 'OTHER-SHARD', lockId: '1' }), backend, true)).toBeUndefined();
  });

  it("finds a station's messages published by another client, a station of the fleet included", () => {
    expect(classify(byDefault.topic('status', { token: 'A' }), backend)).toBe('spoofed');
    expect(classify(byDefault.topic('lockState', { token: 'A', lockId: '1' }), backend)).toBe('spoofed');
    expect(classify(byDefault.topic('acks', { token: 'A' }), { id: 'station-sim-C' })).toBe('spoofed');
    expect(classify(custom.topic('status', { token: 'C' }), stationA)).toBe('spoofed');
    // Not this fleet's station, or no station at all: nobody here to judge it for.
    expect(classify(byDefault.topic('status', { token: 'OTHER-SHARD' }), backend)).toBeUndefined();
    expect(classify(byDefault.topic('status', { token: 'NOBODY' }), backend)).toBeUndefined();
  });

  it('judges no spoofing when the client id template names no token (every station has the same id)', () => {
    const watch = new StationWatch({ ...SPEC, clientId: 'one-for-all' });
    expect(watch.classify({ topic: byDefault.topic('status', { token: 'A' }), payload: '{}', retain: true }, { id: 'one-for-all' })).toBeUndefined();
    expect(watch.classify({ topic: byDefault.topic('unlock', { token: 'ST-9999', lockId: '1' }), payload, retain: false }, backend)?.kind).toBe('unknown-station');
  });

  it('says who published what, where', () => {
    const found = new StationWatch(SPEC).classify({ topic: byDefault.topic('lockState', { token: 'A', lockId: '2' }), payload: '{}', retain: true }, backend);
    expect(found).toEqual({ kind: 'spoofed', message: 'lockState', topic: byDefault.topic('lockState', { token: 'A', lockId: '2' }), token: 'A', lockId: '2', clientId: 'backend', retain: true, payload: Buffer.from('{}') });
  });
});
