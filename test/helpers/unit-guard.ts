/**
 * vitest `setupFiles` of the `unit` project (vitest.config.ts): a file there starts no process,
 * opens no socket and listens on no port, so the project can run first and fail fast. One that
 * does fails here at once, saying so, instead of slowing the unit run down or racing its neighbours.
 */
import { ChildProcess } from 'node:child_process';
import { Server, Socket } from 'node:net';
import { afterAll } from 'vitest';

const refuse = (what: string) => (): never => {
  throw new Error(`a unit test ${what}: take the file off UNIT in vitest.config.ts, so it runs in the 'parallel' project`);
};

// Every child process (spawn, exec, fork) goes through ChildProcess#spawn, which is not in
// Node's types; every TCP or IPC client through Socket#connect; every server (http, https, tls)
// through Server#listen.
const processes = ChildProcess.prototype as ChildProcess & { spawn(options: unknown): void };
const originals = { spawn: processes.spawn, connect: Socket.prototype.connect, listen: Server.prototype.listen };
processes.spawn = refuse('starts a process');
Socket.prototype.connect = refuse('opens a socket');
Server.prototype.listen = refuse('listens on a port');

afterAll(() => {
  processes.spawn = originals.spawn;
  Socket.prototype.connect = originals.connect;
  Server.prototype.listen = originals.listen;
});
