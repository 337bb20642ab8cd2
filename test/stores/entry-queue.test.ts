/** The queue behind MemoryDedupStore's eviction order: first in, first out, stale entries skipped. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EntryQueue } from '../../src/stores/entry-queue.js';

/** A queue of numbers, current while in `live`. */
function queueOf(live: Set<number>): EntryQueue<number> {
  return new EntryQueue((entry) => live.has(entry));
}

describe('EntryQueue', () => {
  it('answers the oldest current entry, dropping the stale ones before it', () => {
    const live = new Set([1, 2, 3, 4]);
    const queue = queueOf(live);
    for (const entry of [1, 2, 3, 4]) queue.push(entry);
    expect(queue.first()).toBe(1);
    live.delete(1);
    live.delete(2);
    expect(queue.first()).toBe(3);
    expect(queue.length).toBe(2);
    queue.shift();
    expect(queue.first()).toBe(4);
    live.delete(4);
    expect(queue.first()).toBeUndefined();
    expect(queue.length).toBe(0);
  });

  it('drops an entry at once when it is the newest, and leaves any other where it is', () => {
    const queue = queueOf(new Set([1, 2, 3]));
    for (const entry of [1, 2, 3]) queue.push(entry);
    queue.dropNewest(2);
    expect(queue.length).toBe(3);
    queue.dropNewest(3);
    expect(queue.length).toBe(2);
    queue.shift();
    queue.shift();
    queue.dropNewest(2);
    expect([queue.length, queue.first()]).toEqual([0, undefined]);
  });

  it('keeps a stale entry queued until it is met or the queue is compacted', () => {
    const live = new Set([1, 2, 3]);
    const queue = queueOf(live);
    for (const entry of [1, 2, 3]) queue.push(entry);
    live.delete(2);
    expect(queue.length).toBe(3);
    queue.compact();
    expect(queue.length).toBe(2);
    expect(queue.first()).toBe(1);
    queue.shift();
    expect(queue.first()).toBe(3);
  });

  it('does nothing when shifting an empty queue, and takes entries again afterwards', () => {
    const queue = queueOf(new Set([7]));
    queue.shift();
    expect(queue.length).toBe(0);
    queue.push(7);
    expect(queue.first()).toBe(7);
  });

  it('behaves as an array filtered on what is current, whatever the pushes, shifts, staleness and compactions', () => {
    type Step = { op: 'push' } | { op: 'shift' } | { op: 'first' } | { op: 'compact' } | { op: 'stale'; pick: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      { weight: 4, arbitrary: fc.constant({ op: 'push' as const }) },
      { weight: 2, arbitrary: fc.constant({ op: 'shift' as const }) },
      { weight: 2, arbitrary: fc.constant({ op: 'first' as const }) },
      { weight: 1, arbitrary: fc.constant({ op: 'compact' as const }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('stale' as const), pick: fc.nat() }) },
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        const live = new Set<number>();
        const queue = queueOf(live);
        let model: number[] = [];
        let next = 0;
        for (const s of steps) {
          if (s.op === 'push') {
            live.add(next);
            queue.push(next);
            model.push(next++);
          } else if (s.op === 'shift') {
            queue.shift();
            model.shift();
          } else if (s.op === 'first') {
            while (model.length > 0 && !live.has(model[0]!)) model.shift();
            expect(queue.first()).toBe(model[0]);
          } else if (s.op === 'compact') {
            queue.compact();
            model = model.filter((entry) => live.has(entry));
            expect(queue.length).toBe(model.length);
          } else if (model.length > 0) {
            live.delete(model[s.pick % model.length]!);
          }
          expect(queue.length).toBe(model.length);
        }
      }),
      { numRuns: 300 },
    );
  });
});
