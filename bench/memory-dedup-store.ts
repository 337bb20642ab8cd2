/**
 * `npm run bench:memory-store`: what MemoryDedupStore costs per delivery (a
 * claim, then its completion) against a plain Map used as a seen-set, the
 * least an in-process dedup can do: one lookup and one insert, and at the
 * bound one eviction of the oldest id from a ring of ids. The same seen-set
 * behind the DedupStore interface (a claim and a completion, each answering
 * a promise that is awaited) shows what the interface's promises cost.
 * Measured on a store far from its bound and on one at its bound of 100,000
 * ids, where every claim evicts. Each round runs `BENCH_OPS` deliveries of
 * new ids per case, the cases interleaved; the figures are medians of the
 * rounds. Then the heap each done id takes, in a store and in the seen-set,
 * filled with 100,000 ids of 30 characters after a full collection (run
 * with --expose-gc): once without the id strings, which any dedup keeps,
 * and once with them.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryDedupStore } from '../src/stores/memory-dedup-store.js';

const OPS = Number(process.env.BENCH_OPS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const BOUND = 100_000;
const LEASE_MS = 60_000;
const TTL_MS = 24 * 3600_000;

/** One delivery of a new id: claim it, then complete it. */
type Deliver = (id: string) => unknown;

/** The seen-set: a Map of id to expiry, and at the bound the oldest id forgotten through a ring of ids. */
function mapSeenSet(bound: number): Deliver {
  const seen = new Map<string, number>();
  const ring: string[] = [];
  let oldest = 0;
  return (id) => {
    if (seen.has(id)) throw new Error(`${id} seen twice`);
    if (seen.size === bound) {
      seen.delete(ring[oldest]!);
      ring[oldest] = id;
      oldest = (oldest + 1) % bound;
    } else {
      ring.push(id);
    }
    seen.set(id, Date.now() + TTL_MS);
  };
}

/** The seen-set behind promises: the claim and the completion each answer one, awaited in turn. */
function mapBehindPromises(bound: number): Deliver {
  const seenSet = mapSeenSet(bound);
  return async (id) => {
    await Promise.resolve(id);
    await Promise.resolve(seenSet(id));
  };
}

function memoryStore(store: MemoryDedupStore): Deliver {
  return async (id) => {
    const claim = await store.begin(id, LEASE_MS);
    if (claim.state !== 'claimed' || !(await store.complete(id, claim.token, TTL_MS))) throw new Error(`${id} not claimed`);
  };
}

/** Nanoseconds per delivery over `ids`, one after another. */
async function measure(deliver: Deliver, ids: readonly string[]): Promise<number> {
  const started = performance.now();
  for (const id of ids) await deliver(id);
  return ((performance.now() - started) * 1e6) / ids.length;
}

function idsOf(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `evt_${prefix}_${i.toString().padStart(8, '0')}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Case {
  readonly size: string;
  readonly name: string;
  /** The deliverer for a round: a new one far from the bound, the same full one at it. */
  readonly forRound: () => Deliver;
}

const fullStore = new MemoryDedupStore({ maxEntries: BOUND });
const fullStoreDeliver = memoryStore(fullStore);
const fullMap = mapSeenSet(BOUND);
const fullMapBehindPromises = mapBehindPromises(BOUND);
for (const id of idsOf('fill', BOUND)) {
  await fullStoreDeliver(id);
  fullMap(id);
  await fullMapBehindPromises(id);
}
if (fullStore.size !== BOUND) throw new Error('the store did not fill up');

const cases: Case[] = [
  { size: `empty, ${OPS.toLocaleString('en')} new ids`, name: 'MemoryDedupStore', forRound: () => memoryStore(new MemoryDedupStore({ maxEntries: BOUND })) },
  { size: `empty, ${OPS.toLocaleString('en')} new ids`, name: 'Map seen-set', forRound: () => mapSeenSet(BOUND) },
  { size: `empty, ${OPS.toLocaleString('en')} new ids`, name: 'Map seen-set behind promises', forRound: () => mapBehindPromises(BOUND) },
  { size: `full, ${BOUND.toLocaleString('en')} ids`, name: 'MemoryDedupStore', forRound: () => fullStoreDeliver },
  { size: `full, ${BOUND.toLocaleString('en')} ids`, name: 'Map seen-set', forRound: () => fullMap },
  { size: `full, ${BOUND.toLocaleString('en')} ids`, name: 'Map seen-set behind promises', forRound: () => fullMapBehindPromises },
];
const samples = cases.map(() => [] as number[]);
// Round -1 warms up the JIT and is not kept.
for (let round = -1; round < ROUNDS; round++) {
  for (const [i, c] of cases.entries()) {
    const nsPerDelivery = await measure(c.forRound(), idsOf(`${round}_${i}`, OPS));
    if (round >= 0) samples[i]!.push(nsPerDelivery);
  }
}
if (fullStore.size !== BOUND) throw new Error('the full store left its bound');

console.log(`Node ${process.version}; ${OPS.toLocaleString('en')} deliveries (claim, then complete) per case and round, median of ${ROUNDS} rounds\n`);
console.log('| store holds | dedup | ns per delivery | vs Map seen-set |');
console.log('|---|---|---:|---:|');
for (const [i, c] of cases.entries()) {
  const ns = median(samples[i]!);
  const map = median(samples[cases.findIndex((other) => other.size === c.size && other.name === 'Map seen-set')]!);
  console.log(`| ${c.size} | ${c.name} | ${ns.toFixed(0)} | ${(ns / map).toFixed(2)}× |`);
}

/** `BOUND` ids of 30 characters, a length an event id takes. */
function heapIds(): string[] {
  return Array.from({ length: BOUND }, (_, i) => `evt_${i.toString().padStart(26, '0')}`);
}

/** Heap bytes per id that `fill` keeps, after full collections; with `countIds`, the id strings are made after the first reading. */
async function heapPerId(fill: (ids: readonly string[]) => Promise<unknown>, countIds: boolean): Promise<number> {
  const collect = globalThis.gc;
  if (collect === undefined) throw new Error('run with node --expose-gc');
  const settled = async (): Promise<number> => {
    await sleep(10);
    collect();
    collect();
    return process.memoryUsage().heapUsed;
  };
  let ids = countIds ? [] : heapIds();
  const before = await settled();
  if (countIds) ids = heapIds();
  const held = await fill(ids);
  // The ids' own array is not the dedup's: let it go before reading.
  ids = [];
  const after = await settled();
  if (held === undefined) throw new Error('nothing held');
  return (after - before) / BOUND;
}

async function filledStore(ids: readonly string[]): Promise<unknown> {
  const store = new MemoryDedupStore({ maxEntries: BOUND });
  const deliver = memoryStore(store);
  for (const id of ids) await deliver(id);
  return store;
}

async function filledMap(ids: readonly string[]): Promise<unknown> {
  const deliver = mapSeenSet(BOUND);
  for (const id of ids) deliver(id);
  return deliver;
}

console.log(`\nHeap per done id, ${BOUND.toLocaleString('en')} ids of ${heapIds()[0]!.length} characters:\n`);
console.log('| dedup | bytes per id | with the id strings |');
console.log('|---|---:|---:|');
for (const [name, fill] of [['MemoryDedupStore', filledStore], ['Map seen-set', filledMap]] as const) {
  console.log(`| ${name} | ${(await heapPerId(fill, false)).toFixed(0)} | ${(await heapPerId(fill, true)).toFixed(0)} |`);
}
