/**
 * `--broker` with STATION_SIM_BROKER_USERNAME / STATION_SIM_BROKER_PASSWORD: credentials that stay
 * out of the process list.
 */
import { describe, expect, it } from 'vitest';
import { brokerUrlWithCredentials } from '../../src/cli/options.js';
import { parseBrokerUrl } from '../../src/mqtt/transport.js';

describe('brokerUrlWithCredentials', () => {
  it('puts the environment’s credentials into a URL without any, encoded so the broker URL parser gets them back whole', () => {
    const url = brokerUrlWithCredentials('mqtt://127.0.0.1:18830', { STATION_SIM_BROKER_USERNAME: 'sim user', STATION_SIM_BROKER_PASSWORD: 'p#ss?w@rd:/' });
    expect(url).toBe('mqtt://sim%20user:p%23ss%3Fw%40rd%3A%2F@127.0.0.1:18830');
    expect(parseBrokerUrl(url)).toMatchObject({ username: 'sim user', password: 'p#ss?w@rd:/' });
  });

  it('leaves the URL alone when the environment has none, or when the URL has credentials of its own', () => {
    expect(brokerUrlWithCredentials('mqtt://127.0.0.1:1883', {})).toBe('mqtt://127.0.0.1:1883');
    const own = 'mqtt://alice:secret@127.0.0.1:1883';
    expect(brokerUrlWithCredentials(own, { STATION_SIM_BROKER_USERNAME: 'bob', STATION_SIM_BROKER_PASSWORD: 'other' })).toBe(own);
  });

  it('takes a user name alone, and refuses a password alone, which MQTT 3.1.1 cannot send', () => {
    expect(brokerUrlWithCredentials('mqtts://broker.example:8883', { STATION_SIM_BROKER_USERNAME: 'sim' })).toBe('mqtts://sim@broker.example:8883');
    expect(() => brokerUrlWithCredentials('mqtt://127.0.0.1:1883', { STATION_SIM_BROKER_PASSWORD: 'secret' })).toThrow(
      'STATION_SIM_BROKER_PASSWORD needs STATION_SIM_BROKER_USERNAME as well',
    );
  });
});
