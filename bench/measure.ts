/**
 * Interleaved rounds with tinybench: every case runs once per round, in the
 * same round as the others, and the median of its rounds is kept, so that
 * the ratios between cases hold on a noisy machine.
 */
import { Bench } from 'tinybench';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
export const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 400);

/** A case: `setup` runs before each round (a fresh store, say) and answers the function to time. */
export type Case = () => () => unknown;

/** Median ops/s of each case over `ROUNDS` interleaved rounds. */
export async function measure(cases: Readonly<Record<string, Case>>): Promise<Map<string, number>> {
  const samples = new Map<string, number[]>(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const bench = new Bench({ time: TIME_MS, warmupTime: 100 });
    for (const [name, setup] of Object.entries(cases)) bench.add(name, setup());
    await bench.run();
    for (const task of bench.tasks) {
      if (task.result.state !== 'completed') throw new Error(`${task.name}: ${task.result.state}`);
      samples.get(task.name)!.push(task.result.throughput.mean);
    }
  }
  return new Map([...samples].map(([name, values]) => [name, median(values)]));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** µs per operation at `opsPerSecond`. */
export const microseconds = (opsPerSecond: number): string => (1e6 / opsPerSecond).toFixed(2);
