/**
 * The cost of each entry's request path against a hand-written minimum
 * doing the same work: each pair timed in a process of its own
 * (`entry-pairs.ts`), so that one entry's garbage and timers are never
 * charged to another's requests. `BENCH_ENTRIES=fetch,dedup` times those
 * pairs alone. Prints a Markdown table: each side's median CPU µs per
 * request, and the median and quartiles of the per-round ratio.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { medianOf, pairedRatio, type CpuRounds } from './cpu-rounds.js';
import { BLOCKS, PAIRS, REQUESTS, ROUNDS, type PairName } from './entry-pair-names.js';

const child = fileURLToPath(new URL('entry-pairs.ts', import.meta.url));
const names = (process.env.BENCH_ENTRIES?.split(',') ?? Object.keys(PAIRS)) as PairName[];

console.log(`Node ${process.version}, each pair in a process of its own: ${ROUNDS} rounds of ${BLOCKS} interleaved blocks per side of ${REQUESTS} requests (Lambda ${REQUESTS * PAIRS.lambda.scale}); CPU per request; 1 KiB envelopes, each a new event\n`);
console.log("| entry | minimum µs/req | svc-webhooks µs/req | ratio (median of rounds) | rounds' quartiles |\n|---|---:|---:|---:|---:|");
for (const name of names) {
  const pair = PAIRS[name];
  if (pair === undefined) throw new Error(`BENCH_ENTRIES names no pair ${name}: ${Object.keys(PAIRS).join(', ')}`);
  const run = spawnSync(process.execPath, [...process.execArgv, child, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (run.status !== 0) throw new Error(`the ${name} pair exited with ${run.status ?? run.signal}`);
  const results: CpuRounds = new Map(Object.entries(JSON.parse(run.stdout) as Record<string, number[]>));
  const { median, p25, p75 } = pairedRatio(results, 'minimum', 'ours');
  const [base, ours] = [medianOf(results.get('minimum')!), medianOf(results.get('ours')!)];
  console.log(`| ${pair.label} | ${base.toFixed(2)} | ${ours.toFixed(2)} | ${median.toFixed(2)}× | ${p25.toFixed(2)}–${p75.toFixed(2)} |`);
}
