/**
 * A redis-server of the test's own on a spare port, in a temporary
 * directory, to kill and restart. Without persistence a restart finds it
 * empty; with an append-only file fsync'd on every write, a restart after
 * SIGKILL finds every write it acknowledged. The shared server is never
 * touched.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export interface PrivateRedisOptions {
  /** Keep an append-only file with `appendfsync always`, which a restart reads back. */
  readonly appendOnly?: boolean;
  /** The port; a free one by default. */
  readonly port?: number;
  /** More `redis-server` arguments, e.g. for cluster mode. */
  readonly args?: readonly string[];
}

export class PrivateRedis {
  #process: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string,
    readonly args: readonly string[],
  ) {}

  /** Starts a server and waits until it answers. */
  static async start(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const dir = await mkdtemp(join(tmpdir(), 'svc-webhooks-redis-'));
    const persistence = options.appendOnly ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
    const server = new PrivateRedis(options.port ?? (await freePort()), dir, [...persistence, ...(options.args ?? [])]);
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server again on the same port, from its append-only file if it keeps one, unless it runs. */
  async start(): Promise<void> {
    if (this.#running()) return;
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', ...this.args];
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    this.#process = child;
    // A test process that ends without closing (a failed or timed-out hook) must not leave the server running.
    const killAtExit = (): void => {
      child.kill('SIGKILL');
      rmSync(this.dir, { recursive: true, force: true });
    };
    process.on('exit', killAtExit);
    child.once('exit', () => process.off('exit', killAtExit));
    const failed = once(child, 'exit').then(() => {
      throw new Error(`redis-server on port ${this.port} exited at start`);
    });
    // Only the race below cares; a later exit is the kill.
    failed.catch(() => {});
    await Promise.race([waitForPong(this.port, 10_000), failed]);
  }

  /** Kills the server at once with SIGKILL, as a crash would. */
  async kill(): Promise<void> {
    const child = this.#process;
    if (child === undefined || !this.#running()) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  /** Kills the server and removes its directory. */
  async close(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
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

/** Whether a server on 127.0.0.1:`port` answers PING with PONG within a second. */
export function pings(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
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
