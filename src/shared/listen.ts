/**
 * Binding a server to a port, with the CLI's rule (docs/design.md, "Interfaces"): port 0 picks a free
 * port; a default port that is taken falls back to a free one (the caller says so); a port given
 * explicitly that is taken is an error.
 */
import type { Server } from 'node:net';
import { SimError } from '../errors.js';

/** The largest TCP port. */
export const MAX_PORT = 65_535;

/** True for a port a server can be asked to listen on: a whole number from 0 (any free one) to MAX_PORT. */
export function isPort(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_PORT;
}

export interface ListenOptions {
  port: number;
  host: string;
  /** When the port is taken, take a free one instead of failing. @default false */
  fallbackToFreePort?: boolean;
  /** What the port is for, in the error message. */
  label: string;
}

/**
 * Refuses a port no server can have before anything starts: Node throws a RangeError for it (and
 * fastify an error of its own), while the caller's option is what is wrong.
 */
export function checkListenPort(label: string, port: unknown): void {
  if (!isPort(port)) throw new SimError('BAD_REQUEST', `${label} port ${String(port)} is not valid: use a whole number from 0 to ${MAX_PORT}`);
}

/** Resolves with the bound port and whether it differs from the one asked for. */
export async function listen(server: Server, options: ListenOptions): Promise<{ port: number; fellBack: boolean }> {
  checkListenPort(options.label, options.port);
  try {
    return { port: await bind(server, options.port, options.host), fellBack: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE' && options.fallbackToFreePort) {
      try {
        return { port: await bind(server, 0, options.host), fellBack: true };
      } catch (again) {
        throw listenFailure(again, { ...options, port: 0 });
      }
    }
    throw listenFailure(error, options);
  }
}

/** True for an error of binding a server: Node's listen, its lookup of the host, or a port it refuses. */
export function isListenError(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  return syscall === 'listen' || syscall === 'getaddrinfo' || code === 'ERR_SOCKET_BAD_PORT';
}

/** Host errors: the name does not resolve, or the address is not one of this machine's. */
const HOST_ERRORS: Readonly<Record<string, string>> = {
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved now',
  EADDRNOTAVAIL: "the address is not one of this machine's",
};

/**
 * A failure to listen as the catalogue names it: PORT_IN_USE for a port taken, HOST_UNAVAILABLE for
 * a host that cannot be listened on, LISTEN_FAILED for anything else (a port that needs privileges).
 * Also for servers that listen by other means (fastify's `listen`).
 */
export function listenFailure(error: unknown, where: Pick<ListenOptions, 'port' | 'host' | 'label'>): SimError {
  if (error instanceof SimError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code === 'EADDRINUSE') {
    return new SimError('PORT_IN_USE', `${where.label} port ${where.port} on ${where.host} is already in use`, { cause: error });
  }
  const hostProblem = HOST_ERRORS[code];
  if (hostProblem !== undefined) {
    return new SimError('HOST_UNAVAILABLE', `Cannot listen on ${where.host} for ${where.label}: ${hostProblem} (${code})`, { cause: error });
  }
  return new SimError('LISTEN_FAILED', `Cannot listen on ${where.host}:${where.port} for ${where.label}: ${(error as Error).message}`, { cause: error });
}

function bind(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = (): void => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/** True for a host that only this machine can reach (docs/design.md, trust model: loopback by default). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host) || /^::ffff:127\./i.test(host);
}
