/**
 * Binding a server to a port, with the CLI's rule (DESIGN.md, "Interfaces"): port 0 picks a free
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

/** Resolves with the bound port and whether it differs from the one asked for. */
export async function listen(server: Server, options: ListenOptions): Promise<{ port: number; fellBack: boolean }> {
  try {
    return { port: await bind(server, options.port, options.host), fellBack: false };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' && options.fallbackToFreePort) {
      return { port: await bind(server, 0, options.host), fellBack: true };
    }
    if (code === 'EADDRINUSE') {
      throw new SimError('PORT_IN_USE', `${options.label} port ${options.port} on ${options.host} is already in use`);
    }
    throw new SimError('PORT_IN_USE', `Cannot listen on ${options.host}:${options.port} for ${options.label}: ${(error as Error).message}`);
  }
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
