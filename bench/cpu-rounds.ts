/**
 * Per-request CPU of cases measured side by side: each round sets every case
 * up afresh, warms each with one block, then runs the cases block by block
 * in turn (the starting case rotating from round to round) and charges each
 * block's `process.cpuUsage()` to its case. A ratio is taken within each
 * round, where the machine's other load falls on both sides alike; the
 * rounds' median and quartiles are reported.
 */

/** A case: `setup` runs before each round and answers the request to time, which resolves to the status answered. */
export type CpuCase = () => Promise<() => Promise<number> | number> | (() => Promise<number> | number);

/** How the rounds run. */
export interface CpuRoundsOptions {
  /** Rounds; each sets every case up afresh. */
  readonly rounds: number;
  /** Blocks of each case per round, interleaved. */
  readonly blocks: number;
  /** Requests per block. */
  readonly requests: number;
}

/** Each case's CPU µs per request in each round. */
export type CpuRounds = ReadonlyMap<string, readonly number[]>;

/** Runs `cases` as described above; rejects when a request answers anything but 204, which a new event must get. */
export async function cpuRounds(cases: Readonly<Record<string, CpuCase>>, { rounds, blocks, requests }: CpuRoundsOptions): Promise<CpuRounds> {
  const names = Object.keys(cases);
  const perRound = new Map<string, number[]>(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    const timed = new Map<string, () => Promise<number> | number>();
    for (const name of order) timed.set(name, await cases[name]!());
    const spent = new Map<string, number>(names.map((name) => [name, 0]));
    for (const name of order) await block(name, timed.get(name)!, requests);
    for (let b = 0; b < blocks; b++) {
      for (const name of order) {
        const before = process.cpuUsage();
        await block(name, timed.get(name)!, requests);
        const used = process.cpuUsage(before);
        spent.set(name, spent.get(name)! + used.user + used.system);
      }
    }
    for (const name of names) perRound.get(name)!.push(spent.get(name)! / (blocks * requests));
  }
  return perRound;
}

async function block(name: string, request: () => Promise<number> | number, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const answered = request();
    const status = typeof answered === 'number' ? answered : await answered;
    if (status !== 204) throw new Error(`${name} answered ${status}, not 204`);
  }
}

/** The median and quartiles of `ours / minimum`, round by round. */
export function pairedRatio(results: CpuRounds, minimum: string, ours: string): { readonly median: number; readonly p25: number; readonly p75: number } {
  const base = results.get(minimum)!;
  const [p25, median, p75] = quartilesOf(results.get(ours)!.map((value, round) => value / base[round]!));
  return { median, p25, p75 };
}

/** The first quartile, the median and the third quartile of `values`. */
export function quartilesOf(values: readonly number[]): [number, number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return [at(0.25), at(0.5), at(0.75)];
}

/** The median of a case's rounds. */
export function medianOf(values: readonly number[]): number {
  return quartilesOf(values)[1];
}
