/**
 * The accounts of the fixture (interface section 1: "email and password, which are issued to
 * it"), with their passwords as scrypt hashes and the set of stations each may reach.
 */
import type { AccountSpec } from '../../fixture/fixture-schema.js';
import { hashPassword, verifyPassword, type PasswordHash } from './password-hasher.js';

export interface Account {
  /** Stable id of the account: its email in lower case. It is the `sub` claim of access tokens. */
  readonly id: string;
  readonly email: string;
  /** Tokens of the stations the account may reach. */
  readonly stations: ReadonlySet<string>;
}

interface StoredAccount extends Account {
  readonly password: PasswordHash;
}

export class AccountDirectory {
  readonly #accounts: Map<string, StoredAccount>;
  /** Compared against for unknown emails, so a miss costs the same scrypt work as a wrong password. */
  readonly #decoy: PasswordHash;

  private constructor(accounts: Map<string, StoredAccount>, decoy: PasswordHash) {
    this.#accounts = accounts;
    this.#decoy = decoy;
  }

  /** Hashes every fixture password (in parallel on libuv's thread pool). */
  static async create(specs: readonly AccountSpec[]): Promise<AccountDirectory> {
    const [decoy, ...hashes] = await Promise.all([
      hashPassword('station-sim decoy password'),
      ...specs.map((spec) => hashPassword(spec.password)),
    ]);
    const accounts = new Map<string, StoredAccount>();
    specs.forEach((spec, index) => {
      const id = normaliseEmail(spec.email);
      accounts.set(id, { id, email: spec.email, stations: new Set(spec.stations), password: hashes[index]! });
    });
    return new AccountDirectory(accounts, decoy);
  }

  /**
   * The account whose email and password match, or undefined. Emails match case-insensitively.
   * Known and unknown emails take the same time: both run scrypt and one `timingSafeEqual`.
   */
  async verify(email: string, password: string): Promise<Account | undefined> {
    const account = this.#accounts.get(normaliseEmail(email));
    const matches = await verifyPassword(password, account?.password ?? this.#decoy);
    return account && matches ? publicView(account) : undefined;
  }

  get(id: string): Account | undefined {
    const account = this.#accounts.get(id);
    return account ? publicView(account) : undefined;
  }
}

/** How emails are compared: surrounding spaces ignored, case-insensitive. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

function publicView(account: StoredAccount): Account {
  return { id: account.id, email: account.email, stations: account.stations };
}
