/**
 * The worker processes of the pg-boss load and crash tests: started as
 * children, killed with SIGKILL at random as a crash would, and started
 * again, as a supervisor (systemd, Kubernetes) would, whenever one ended,
 * killed or not (pg-boss may end one itself: it completes jobs without
 * awaiting, so a lost connection can surface as an unhandled rejection).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { WorkerSettings } from './pg-boss-worker-process.js';

const RESTART_AFTER_MS = 300;

export interface WorkerFleet {
  /**
   * Kills one worker of those that began to poll between `ages[0]` and
   * `ages[1]` ms ago (any, by default), picked by `pick` (a number in
   * [0, 1)), with SIGKILL; it is started again. Kills none when no worker is
   * of such an age. A worker's age runs from its `working`, not its spawn:
   * loading Node, tsx and pg-boss takes seconds on a busy machine, and a
   * worker takes jobs only once it polls.
   */
  killOne(pick: number, ages?: readonly [number, number]): void;
  /** Workers killed by the test, and those that ended by themselves. */
  readonly kills: number;
  readonly exits: number;
  /** Kills every worker for good. */
  close(): Promise<void>;
}

/** Starts `size` workers and resolves once each one polls. */
export async function startWorkerFleet(size: number, settings: WorkerSettings): Promise<WorkerFleet> {
  const workers: Array<ChildProcess | undefined> = [];
  let closing = false;
  let kills = 0;
  let exits = 0;
  const killed = new WeakSet<ChildProcess>();
  /** When each worker began to poll (printed `working`); none yet for one still starting. */
  const startedAt = new WeakMap<ChildProcess, number>();

  const start = (slot: number): Promise<void> => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/pg-boss-worker-process.ts', JSON.stringify(settings)], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    workers[slot] = child;
    child.once('exit', () => {
      if (workers[slot] === child) workers[slot] = undefined;
      if (!killed.has(child)) exits += 1;
      if (!closing) setTimeout(() => void (closing || start(slot)), RESTART_AFTER_MS);
    });
    return new Promise((resolve) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        if (!chunk.toString().includes('working')) return;
        if (!startedAt.has(child)) startedAt.set(child, performance.now());
        resolve();
      });
      // One that ends before it works (its database is down) is started again; nobody waits on it.
      child.once('exit', () => resolve());
    });
  };

  await Promise.all(Array.from({ length: size }, (_, slot) => start(slot)));
  return {
    killOne(pick, [minAgeMs, maxAgeMs] = [0, Infinity]) {
      const now = performance.now();
      const aged = (child: ChildProcess): boolean => {
        const polling = startedAt.get(child);
        if (polling === undefined) return minAgeMs <= 0 && maxAgeMs === Infinity;
        return now - polling >= minAgeMs && now - polling <= maxAgeMs;
      };
      const alive = workers.filter((child): child is ChildProcess => child !== undefined && aged(child));
      const victim = alive[Math.floor(pick * alive.length)];
      if (victim === undefined) return;
      killed.add(victim);
      kills += 1;
      victim.kill('SIGKILL');
    },
    get kills() {
      return kills;
    },
    get exits() {
      return exits;
    },
    async close() {
      closing = true;
      await Promise.all(
        workers.map(async (child) => {
          if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
          const ended = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGKILL');
          await ended;
        }),
      );
    },
  };
}
