/**
 * The cost of each entry's request path against a hand-written minimum
 * doing the same work: each pair timed in a process of its own
 * (`entry-pairs.ts`), so that one entry's garbage and timers are never
 * charged to another's requests. `BENCH_ENTRIES=fetch,dedup` times those
 * pairs alone; `BENCH_APART=1` times each side in a process of its own.
 * Prints a Markdown table: each side's median CPU µs per request, and the
 * median and quartiles of the per-round ratio.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { medianOf, pairedRatio, type CpuRounds } from './cpu-rounds.js';
import { BLOCKS, PAIRS, REQUESTS, ROUNDS, type PairName } from './entry-pair-names.js';

const child = fileURLToPath(new URL('entry-pairs.ts', import.meta.url));
const names = (process.env.BENCH_ENTRIES?.split(',') ?? Object.keys(PAIRS)) as PairName[];
// BENCH_APART=1: each side of a pair in a process of its own, where the other side never ran.
const APART = process.env.BENCH_APART === '1';

const layout = APART ? 'each side of a pair in a process of its own' : 'each pair in a process of its own, its sides interleaved';
console.log(`Node ${process.version}, ${layout}: ${ROUNDS} rounds of ${BLOCKS} blocks per side of ${REQUESTS} requests (Lambda ${REQUESTS * PAIRS.lambda.scale}); CPU per request; 1 KiB envelopes, each a new event\n`);
const ratioColumn = APART ? 'ratio of the medians' : 'ratio (median of rounds)';
console.log(`| entry | minimum µs/req | svc-webhooks µs/req | ${ratioColumn} | rounds' quartiles |\n|---|---:|---:|---:|---:|`);
for (const name of names) {
  const pair = PAIRS[name];
  if (pair === undefined) throw new Error(`BENCH_ENTRIES names no pair ${name}: ${Object.keys(PAIRS).join(', ')}`);
  if (APART) {
    // Each side in a process of its own: no round pairs them, so the ratio is of the two sides' medians.
    const [base, ours] = [medianOf(timed(name, 'minimum').get('minimum')!), medianOf(timed(name, 'ours').get('ours')!)];
    console.log(`| ${pair.label} | ${base.toFixed(2)} | ${ours.toFixed(2)} | ${(ours / base).toFixed(2)}× | |`);
    continue;
  }
  const results = timed(name);
  const { median, p25, p75 } = pairedRatio(results, 'minimum', 'ours');
  const [base, ours] = [medianOf(results.get('minimum')!), medianOf(results.get('ours')!)];
  console.log(`| ${pair.label} | ${base.toFixed(2)} | ${ours.toFixed(2)} | ${median.toFixed(2)}× | ${p25.toFixed(2)}–${p75.toFixed(2)} |`);
}

/** The rounds of pair `name` (of one side alone, when `side` is given), timed in a child process. */
function timed(name: PairName, side?: 'minimum' | 'ours'): CpuRounds {
  const run = spawnSync(process.execPath, [...process.execArgv, child, name, ...(side === undefined ? [] : [side])], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (run.status !== 0) throw new Error(`the ${name} pair exited with ${run.status ?? run.signal}`);
  return new Map(Object.entries(JSON.parse(run.stdout) as Record<string, number[]>));
}
