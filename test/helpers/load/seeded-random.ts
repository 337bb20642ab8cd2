/**
 * Seeded randomness for the load tests. Every draw is a pure function of the
 * run's seed and the draw's keys (event id, call number), so a run replays
 * the same failures and delays with `LOAD_SEED=<seed>` whatever order the
 * requests happen to interleave in.
 */
import { createHash, randomInt } from 'node:crypto';
import { onTestFailed } from 'vitest';

/** `LOAD_SEED` if set, else a fresh seed; the seed is printed if the current test fails. */
export function replayableSeed(): number {
  const fromEnv = process.env.LOAD_SEED;
  const seed = fromEnv === undefined || fromEnv === '' ? randomInt(2 ** 31) : Number(fromEnv);
  if (!Number.isSafeInteger(seed)) throw new Error(`LOAD_SEED must be an integer, got ${fromEnv}`);
  onTestFailed(() => {
    console.error(`replay this run with LOAD_SEED=${seed}`);
  });
  return seed;
}

/** A number in [0, 1) fixed by the seed and the keys. */
export function draw(seed: number, ...keys: ReadonlyArray<string | number>): number {
  const digest = createHash('sha256').update(JSON.stringify([seed, ...keys])).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}
