/**
 * A redis-server of the test's own on a spare port, without persistence, to
 * kill and restart. The shared server is never touched.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createConnection } from 'node:net';
import { freePort } from '../helpers/free-port.js';

export class PrivateRedis {
  #process: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  /** Starts a server on a free port and waits until it answers. */
  static async start(): Promise<PrivateRedis> {
    const server = new PrivateRedis(await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server again on the same port, empty, unless it runs. */
  async start(): Promise<void> {
    if (this.#running()) return;
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    this.#process = child;
    const failed = once(child, 'exit').then(() => {
      throw new Error(`redis-server on port ${this.port} exited at start`);
    });
    // Only the race below cares; a later exit is the kill.
    failed.catch(() => {});
    await Promise.race([waitForPong(this.port, 10_000), failed]);
  }

  /** Kills the server at once, as a crash would. */
  async kill(): Promise<void> {
    const child = this.#process;
    if (child === undefined || !this.#running()) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  #running(): boolean {
    const child = this.#process;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }
}

/** Polls with PING until the server answers PONG, for at most `timeoutMs`. */
async function waitForPong(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await pings(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
}

function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.setTimeout(1_000);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
