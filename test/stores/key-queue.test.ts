/** The queue behind MemoryDedupStore's eviction order: first in, first out, stale keys skipped. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyQueue } from '../../src/stores/key-queue.js';

/** A queue of keys, each current while `live` maps it to the stamp it was queued with. */
function queueOf(live: Map<string, number>): KeyQueue {
  return new KeyQueue((key, stamp) => live.get(key) === stamp, live);
}

/** Queues each key with stamp 1 and marks it live. */
function filled(live: Map<string, number>, keys: readonly string[]): KeyQueue {
  const queue = queueOf(live);
  for (const key of keys) {
    live.set(key, 1);
    queue.push(key, 1);
  }
  return queue;
}

/** Makes the oldest current key stale, as a store does when it forgets it, and answers it. */
function forgetFirst(queue: KeyQueue, live: Map<string, number>): string | undefined {
  const key = queue.first();
  if (key !== undefined) live.delete(key);
  return key;
}

describe('KeyQueue', () => {
  it('answers the oldest current key, dropping the stale ones before it', () => {
    const live = new Map<string, number>();
    const queue = filled(live, ['a', 'b', 'c', 'd']);
    expect(queue.first()).toBe('a');
    live.delete('a');
    live.set('b', 2);
    expect(queue.first()).toBe('c');
    expect(queue.length).toBe(2);
    expect(forgetFirst(queue, live)).toBe('c');
    expect(queue.first()).toBe('d');
    live.delete('d');
    expect(queue.first()).toBeUndefined();
    expect(queue.length).toBe(0);
  });

  it('drops a key at once when it is the newest with that stamp, and leaves any other where it is', () => {
    const live = new Map<string, number>();
    const queue = filled(live, ['a', 'b', 'c']);
    queue.dropNewest('b', 1);
    queue.dropNewest('c', 2);
    expect(queue.length).toBe(3);
    queue.dropNewest('c', 1);
    expect(queue.length).toBe(2);
    forgetFirst(queue, live);
    live.delete('b');
    expect(queue.first()).toBeUndefined();
    queue.dropNewest('b', 1);
    expect(queue.length).toBe(0);
  });

  it('drops the only key it holds when it is the newest', () => {
    const live = new Map<string, number>();
    const queue = filled(live, ['a', 'b']);
    forgetFirst(queue, live);
    expect(queue.first()).toBe('b');
    expect(queue.length).toBe(1);
    queue.dropNewest('b', 1);
    expect(queue.length).toBe(0);
  });

  it('keeps a stale key queued until it is met or the queue is compacted', () => {
    const live = new Map<string, number>();
    const queue = filled(live, ['a', 'b', 'c']);
    live.delete('b');
    expect(queue.length).toBe(3);
    queue.compact();
    expect(queue.length).toBe(2);
    expect(forgetFirst(queue, live)).toBe('a');
    expect(queue.first()).toBe('c');
  });

  it('keeps only the last slot of a key when compacting, though an older one has the same stamp', () => {
    const live = new Map<string, number>();
    const queue = filled(live, ['a', 'b']);
    // 'a' is deleted and given a state of the same stamp again, a thousand times: each state queues a slot.
    for (let i = 0; i < 1_000; i++) queue.push('a', 1);
    expect(queue.first()).toBe('a');
    queue.compact();
    expect(queue.length).toBe(2);
    expect(forgetFirst(queue, live)).toBe('b');
    expect(queue.first()).toBe('a');
  });

  it('compacts itself on the push that takes its stale slots past twice the keys held and the slack', () => {
    const live = new Map<string, number>();
    const queue = filled(live, ['a', 'b']);
    const room = 2 * live.size + KeyQueue.SLACK;
    // Slots of a key that has no state: stale from the start.
    for (let i = queue.length; i < room; i++) queue.push('gone', 1);
    expect(queue.length).toBe(room);
    queue.push('gone', 1);
    expect(queue.length).toBe(2);
    expect(forgetFirst(queue, live)).toBe('a');
    expect(queue.first()).toBe('b');
  });

  it('gives back the slots it dropped past, still answering the keys after them', () => {
    const live = new Map<string, number>();
    const queue = filled(live, Array.from({ length: 10 }, (_, i) => `k${i}`));
    for (let i = 0; i < 6; i++) forgetFirst(queue, live);
    expect(queue.first()).toBe('k6');
    expect(queue.length).toBe(4);
    queue.dropNewest('k9', 1);
    expect(queue.length).toBe(3);
    queue.push('k10', 1);
    live.set('k10', 1);
    for (const key of ['k6', 'k7', 'k8', 'k10']) expect(forgetFirst(queue, live)).toBe(key);
    expect(queue.first()).toBeUndefined();
  });

  it('behaves as an array filtered on what is current, whatever the pushes, staleness and compactions', () => {
    type Step = { op: 'push' } | { op: 'first' } | { op: 'compact' } | { op: 'stale'; pick: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      { weight: 4, arbitrary: fc.constant({ op: 'push' as const }) },
      { weight: 2, arbitrary: fc.constant({ op: 'first' as const }) },
      { weight: 1, arbitrary: fc.constant({ op: 'compact' as const }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant('stale' as const), pick: fc.nat() }) },
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        const live = new Map<string, number>();
        const queue = queueOf(live);
        let model: string[] = [];
        let next = 0;
        const current = (key: string): boolean => live.has(key);
        for (const s of steps) {
          if (s.op === 'push') {
            const key = `k${next++}`;
            live.set(key, next);
            queue.push(key, next);
            model.push(key);
          } else if (s.op === 'first') {
            while (model.length > 0 && !current(model[0]!)) model.shift();
            expect(queue.first()).toBe(model[0]);
          } else if (s.op === 'compact') {
            queue.compact();
            model = model.filter(current);
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
