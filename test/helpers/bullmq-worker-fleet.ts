/**
 * The load runs' worker processes (`bullmq-load-worker.ts`, or another
 * script that prints `ready` once it runs): started, SIGKILLed
 * one at a time in turn and started again at once, as a crashing host
 * would, and killed for good at the end. What they wrote to stderr is kept,
 * the last lines of it, for a run that fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

const WORKER = new URL('./bullmq-load-worker.ts', import.meta.url).pathname;
const KEPT_STDERR = 4_000;

export class WorkerFleet {
  readonly #processes: ChildProcess[] = [];
  readonly #env: ReadonlyArray<Record<string, string>>;
  readonly #script: string;
  #next = 0;
  #stderr = '';
  /** The workers SIGKILLed mid-run: when each was killed (`Date.now()`), by process id. */
  readonly killed = new Map<number, number>();

  /** One process per entry of `env`, each with those variables over the test's own. */
  private constructor(env: ReadonlyArray<Record<string, string>>, script: string) {
    this.#env = env;
    this.#script = script;
  }

  /** Starts the processes, each running `script`, and waits until each runs its worker. */
  static async start(env: ReadonlyArray<Record<string, string>>, script = WORKER): Promise<WorkerFleet> {
    const fleet = new WorkerFleet(env, script);
    await Promise.all(env.map((_, index) => fleet.#spawn(index)));
    return fleet;
  }

  /** SIGKILLs the next process in turn and starts it again; resolves once the new one runs. */
  async killOne(): Promise<void> {
    const index = this.#next++ % this.#processes.length;
    const child = this.#processes[index]!;
    this.killed.set(child.pid!, Date.now());
    await this.#kill(child);
    await this.#spawn(index);
  }

  /** Kills every process. */
  async stop(): Promise<void> {
    await Promise.all(this.#processes.map((child) => this.#kill(child)));
  }

  /** The last of what the processes wrote to stderr. */
  get stderr(): string {
    return this.#stderr;
  }

  async #kill(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  async #spawn(index: number): Promise<void> {
    const child = spawn(process.execPath, ['--import', 'tsx', this.#script], {
      env: { ...process.env, ...this.#env[index] },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#processes[index] = child;
    // A test process that ends without stopping the fleet must not leave workers running.
    const killAtExit = (): void => void child.kill('SIGKILL');
    process.on('exit', killAtExit);
    child.once('exit', () => process.off('exit', killAtExit));
    child.stderr!.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-KEPT_STDERR);
    });
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
      child.once('exit', (code, signal) => reject(new Error(`a load worker exited before it ran (${code ?? signal}): ${this.#stderr}`)));
    });
    await ready;
  }
}
