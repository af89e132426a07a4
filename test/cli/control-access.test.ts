/** The start-up line on who may drive the control plane (`controlAccess`, src/cli/options.ts). */
import { expect, it } from 'vitest';
import { controlAccess } from '../../src/cli/option-checks.js';

it('promises a token only over HTTP when the embedded broker is open to anyone', () => {
  const open = controlAccess('127.0.0.1', 'a-control-token', false, true);
  expect(open).toMatch(/^control plane loopback only, token required; over HTTP only: the embedded broker is open, so any MQTT client that reaches it can publish to the control topics without the token/);
  expect(open).not.toContain('a-control-token');
  expect(controlAccess('127.0.0.1', 'a-control-token', false, false)).toBe('control plane loopback only, token required');
});

it('says an open control plane is open, whatever the broker', () => {
  expect(controlAccess('0.0.0.0', undefined, false, true)).toBe('control plane bound to 0.0.0.0, no token (open to anyone who can reach it)');
});
