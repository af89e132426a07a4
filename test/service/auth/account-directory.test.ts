import { expect, test } from 'vitest';
import { AccountDirectory } from '../../../src/service/auth/account-directory.js';
import { hashPassword, verifyPassword } from '../../../src/service/auth/password-hasher.js';

test('verifies email (any case) and password; unknown emails and wrong passwords are undefined', async () => {
  const directory = await AccountDirectory.create([{ email: 'Ann@Example.com', password: 'pw-1', stations: ['S-1'] }]);
  expect(await directory.verify('ann@example.com', 'pw-1')).toMatchObject({ id: 'ann@example.com', email: 'Ann@Example.com' });
  expect((await directory.verify('ANN@EXAMPLE.COM', 'pw-1'))?.stations.has('S-1')).toBe(true);
  expect(await directory.verify('ann@example.com', 'pw-2')).toBeUndefined();
  expect(await directory.verify('nobody@example.com', 'pw-1')).toBeUndefined();
  // The decoy's own password does not open anything either.
  expect(await directory.verify('nobody@example.com', 'station-sim decoy password')).toBeUndefined();
  expect(directory.get('ann@example.com')?.email).toBe('Ann@Example.com');
});

test('hashes are salted: the same password hashes differently per account', async () => {
  const one = await hashPassword('same');
  const two = await hashPassword('same');
  expect(one.hash.equals(two.hash)).toBe(false);
  expect(await verifyPassword('same', one)).toBe(true);
  expect(await verifyPassword('Same', one)).toBe(false);
});
