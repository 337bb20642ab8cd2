/**
 * Random sequences of begin, complete, release, renew and clock moves on
 * MemoryDedupStore, checked step by step against a plain reference model.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryDedupStore } from '../../src/stores/memory-dedup-store.js';

type Step =
  | { readonly op: 'begin'; readonly id: number; readonly ms: number }
  | { readonly op: 'complete'; readonly id: number; readonly pick: number; readonly ms: number }
  | { readonly op: 'release'; readonly id: number; readonly pick: number }
  | { readonly op: 'renew'; readonly id: number; readonly pick: number; readonly ms: number }
  | { readonly op: 'advance'; readonly ms: number };

const ms = fc.integer({ min: 1, max: 100 });
const id = fc.integer({ min: 0, max: 5 });
// `pick` chooses among every token issued for the id, stale ones included, or a foreign one.
const pick = fc.nat();
const steps = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ op: fc.constant('begin' as const), id, ms }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('complete' as const), id, pick, ms }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('release' as const), id, pick }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('renew' as const), id, pick, ms }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 150 }) }) },
  ) as fc.Arbitrary<Step>,
  // 'max': the default size would keep sequences too short to fill the store.
  { maxLength: 60, size: 'max' },
);

type ModelEntry =
  | { readonly kind: 'leased'; readonly token: string; readonly until: number }
  | { readonly kind: 'done'; readonly until: number };

/** The specification: an entry lives while `until > now`; only the live lease's token completes or releases it. */
class Model {
  readonly #entries = new Map<string, ModelEntry>();

  live(key: string, now: number): ModelEntry | undefined {
    const entry = this.#entries.get(key);
    return entry !== undefined && entry.until > now ? entry : undefined;
  }

  holds(key: string, token: string, now: number): boolean {
    const entry = this.live(key, now);
    return entry?.kind === 'leased' && entry.token === token;
  }

  /** What the store may answer; `bounded` admits evicted done ids and refused claims. */
  allowed(step: Exclude<Step, { op: 'advance' }>, key: string, token: string, now: number, bounded: boolean): unknown[] {
    if (step.op !== 'begin') return [this.holds(key, token, now)];
    const entry = this.live(key, now);
    if (entry?.kind === 'leased') return ['in_progress'];
    if (!bounded) return [entry === undefined ? 'claimed' : 'done'];
    return entry === undefined ? ['claimed', 'dedup_unavailable'] : ['done', 'claimed', 'dedup_unavailable'];
  }

  /** Follows the store's answer: a claim, a completion, a release or a renewal. */
  apply(step: Exclude<Step, { op: 'advance' }>, key: string, answer: unknown, token: string, now: number): void {
    if (step.op === 'begin') {
      if (answer === 'claimed') this.#entries.set(key, { kind: 'leased', token, until: now + step.ms });
    } else if (answer === true) {
      if (step.op === 'complete') this.#entries.set(key, { kind: 'done', until: now + step.ms });
      else if (step.op === 'renew') this.#entries.set(key, { kind: 'leased', token, until: now + step.ms });
      else this.#entries.delete(key);
    }
  }
}

/** Runs the steps on a fresh store and on the model, comparing every answer. */
async function runAgainstModel(sequence: readonly Step[], maxEntries: number, bounded: boolean): Promise<void> {
  let now = 0;
  const store = new MemoryDedupStore({ maxEntries, now: () => now });
  const model = new Model();
  const issued = new Map<string, string[]>();
  try {
    for (const step of sequence) {
      if (step.op === 'advance') {
        now += step.ms;
        continue;
      }
      const key = `evt_${step.id}`;
      const tokens = issued.get(key) ?? [];
      let answer: unknown;
      let token = step.op === 'begin' ? '' : (tokens[step.pick % (tokens.length + 1)] ?? 'foreign-token');
      if (step.op === 'begin') {
        const result = await store.begin(key, step.ms).catch((error: { code: string }) => ({ state: error.code }));
        answer = result.state;
        if ('token' in result) {
          token = result.token;
          issued.set(key, [...tokens, token]);
        }
      } else if (step.op === 'complete') {
        answer = await store.complete(key, token, step.ms);
      } else if (step.op === 'renew') {
        answer = await store.renew(key, token, step.ms);
      } else {
        answer = await store.release(key, token);
      }
      expect(model.allowed(step, key, token, now, bounded)).toContain(answer);
      expect(store.size).toBeLessThanOrEqual(maxEntries);
      model.apply(step, key, answer, token, now);
    }
  } finally {
    store.close();
  }
}

describe('MemoryDedupStore against a reference model', () => {
  it('answers every step exactly as the model while it has room', async () => {
    await fc.assert(
      fc.asyncProperty(steps, (sequence) => runAgainstModel(sequence, 1_000, false)),
      { numRuns: 300 },
    );
  });

  it('never loses a live lease nor exceeds maxEntries when full', async () => {
    await fc.assert(
      fc.asyncProperty(steps, (sequence) => runAgainstModel(sequence, 3, true)),
      { numRuns: 300 },
    );
  });
});
