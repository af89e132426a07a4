/** Broker URLs: parsed for the CONNECT packet, and never shown with their credentials. */
import { describe, expect, it } from 'vitest';
import { parseBrokerUrl } from '../../src/mqtt/transport.js';
import { redactUrl, redactUrlsIn } from '../../src/shared/redact-url.js';

describe('broker URLs', () => {
  it('takes percent-encoded credentials, and refuses a bad escape or a password without a user name without showing them', () => {
    expect(parseBrokerUrl('mqtt://st%40tion:p%25ss@127.0.0.1:1884')).toEqual({ scheme: 'mqtt', host: '127.0.0.1', port: 1884, path: '/', username: 'st@tion', password: 'p%ss' });
    expect(() => parseBrokerUrl('mqtt://user:50%off@127.0.0.1')).toThrow(/Invalid broker URL "mqtt:\/\/\*\*\*@127\.0\.0\.1": the user name or password is not percent-encoded/);
    expect(() => parseBrokerUrl('mqtt://:secret@127.0.0.1')).toThrow(/a password needs a user name/);
    // Redacted up to the last @: a password may hold @ or / itself.
    expect(redactUrl('mqtt://user:s3cr@t@127.0.0.1:1')).toBe('mqtt://***@127.0.0.1:1');
    expect(redactUrl('mqtt://user:pa/ss@127.0.0.1:1')).toBe('mqtt://***@127.0.0.1:1');
    expect(redactUrl('mqtt://127.0.0.1:1883')).toBe('mqtt://127.0.0.1:1883');
    // A pre-signed WebSocket URL carries its credential in the query.
    const signed = 'wss://iot.example.com/mqtt?X-Amz-Security-Token=tok3n&X-Amz-Signature=s1gnature';
    expect(redactUrl(signed)).toBe('wss://iot.example.com/mqtt?***');
    expect(redactUrlsIn(`The MQTT broker at ${signed} cannot be reached (ECONNREFUSED)`)).toBe('The MQTT broker at wss://iot.example.com/mqtt?*** cannot be reached (ECONNREFUSED)');
    // Inside a message, every URL's userinfo goes, up to its last `@`.
    expect(redactUrlsIn('Invalid URL: ws://user:pa/ss@h@host:1/x and nope://a:b@c')).toBe('Invalid URL: ws://***@host:1/x and nope://***@c');
    expect(() => parseBrokerUrl('mqtt://user:pa/ss@127.0.0.1:1')).toThrow(expect.objectContaining({ message: expect.not.stringContaining('pa/ss') }));
    for (const bad of ['mqtt://user:50%off@127.0.0.1', 'mqtt://:secret@127.0.0.1']) {
      expect(() => parseBrokerUrl(bad)).toThrow(expect.objectContaining({ code: 'BROKER_UNREACHABLE', message: expect.not.stringMatching(/secret|50%off/) }));
    }
  });

  it('redacts a password typed with # or ? in it (not percent-encoded), which a URL parser takes for a fragment or a query', () => {
    for (const url of ['mqtt://user:s3cr#tPW@127.0.0.1:1', 'mqtt://user:s3cr?tPW@127.0.0.1:1', 'mqtt://user:a?b#c@d@127.0.0.1:1']) {
      expect(redactUrl(url)).toBe('mqtt://***@127.0.0.1:1');
      expect(redactUrlsIn(`Invalid broker URL "${url}": expected mqtt://host:port`)).toBe('Invalid broker URL "mqtt://***@127.0.0.1:1": expected mqtt://host:port');
      expect(() => parseBrokerUrl(url)).toThrow(
        expect.objectContaining({
          code: 'BROKER_UNREACHABLE',
          message: 'Invalid broker URL "mqtt://***@127.0.0.1:1": expected mqtt://host:port (percent-encode any #, ?, / or @ in the user name or password)',
        }),
      );
    }
  });
});
