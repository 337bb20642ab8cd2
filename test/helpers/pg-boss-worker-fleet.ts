/**
 * The worker processes of the pg-boss load and crash tests: started as
 * children, killed with SIGKILL as a crash would, and started
 * again, as a supervisor (systemd, Kubernetes) would, whenever one ended,
 * killed or not (pg-boss may end one itself: it completes jobs without
 * awaiting, so a lost connection can surface as an unhandled rejection).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { WorkerSettings } from './pg-boss-worker-process.js';

const RESTART_AFTER_MS = 300;

export interface WorkerFleet {
  /**
   * Kills, with SIGKILL, one of the workers that hold a handler whose side
   * effect has committed and which has not ended (the worker printed
   * `committed` for it, and not yet `finished`), picked by `pick` (a number
   * in [0, 1)); it is started again. Its jobs run again once they expire,
   * and find their effect done. Answers whether it killed one: none holds
   * such a handler when the queue is empty, or between batches.
   */
  killOne(pick: number): boolean;
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
  /** How many handlers of each worker have committed their effect and not ended. */
  const holding = new WeakMap<ChildProcess, number>();

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
    holding.set(child, 0);
    return new Promise((resolve) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line === 'working') resolve();
        if (line === 'committed') holding.set(child, holding.get(child)! + 1);
        if (line === 'finished') holding.set(child, holding.get(child)! - 1);
      });
      // One that ends before it works (its database is down) is started again; nobody waits on it.
      child.once('exit', () => resolve());
    });
  };

  await Promise.all(Array.from({ length: size }, (_, slot) => start(slot)));
  return {
    killOne(pick) {
      const holders = workers.filter((child): child is ChildProcess => child !== undefined && holding.get(child)! > 0 && !killed.has(child));
      const victim = holders[Math.floor(pick * holders.length)];
      if (victim === undefined) return false;
      killed.add(victim);
      kills += 1;
      victim.kill('SIGKILL');
      return true;
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
