/**
 * The store contract's own helpers: what counts as a `DedupStore`, and the
 * operations a store that answers within this process registers, which stop
 * standing for it once one of its methods is replaced.
 */
import { describe, expect, it } from 'vitest';
import { answerAtOnce, answersAtOnce, isDedupStore, type AnswersAtOnce, type DedupStore } from '../../src/stores/dedup-store.js';
import { MemoryDedupStore } from '../../src/stores/memory-dedup-store.js';

/** A store of four methods that do nothing. */
function plainStore(): DedupStore {
  return {
    begin: async () => ({ state: 'in_progress' }),
    complete: async () => true,
    release: async () => true,
    renew: async () => true,
  };
}

const OPERATIONS: AnswersAtOnce = { begin: () => ({ state: 'done' }), complete: () => true, release: () => true };

describe('isDedupStore', () => {
  it('takes an object with the four methods, a class instance included', () => {
    expect(isDedupStore(plainStore())).toBe(true);
    expect(isDedupStore(new MemoryDedupStore())).toBe(true);
  });

  it.each(['begin', 'complete', 'release', 'renew'] as const)('refuses an object whose %s is no function', (method) => {
    expect(isDedupStore({ ...plainStore(), [method]: undefined })).toBe(false);
    expect(isDedupStore({ ...plainStore(), [method]: 'a method' })).toBe(false);
  });

  it.each([null, undefined, 'store', 42, () => undefined])('refuses %s', (value) => {
    expect(isDedupStore(value)).toBe(false);
  });

  it('refuses a function that carries the four methods', () => {
    expect(isDedupStore(Object.assign(() => undefined, plainStore()))).toBe(false);
  });
});

describe('answersAtOnce', () => {
  it('gives nothing for a store that registered nothing', () => {
    expect(answersAtOnce(plainStore())).toBe(undefined);
  });

  it('gives the operations a store registered while its methods are those they stand for', () => {
    const store = plainStore();
    answerAtOnce(store, { begin: store.begin, complete: store.complete, release: store.release }, OPERATIONS);
    expect(answersAtOnce(store)).toBe(OPERATIONS);
  });

  it.each(['begin', 'complete', 'release'] as const)('gives nothing once %s was replaced, so the replacement is called', (method) => {
    const store = plainStore();
    answerAtOnce(store, { begin: store.begin, complete: store.complete, release: store.release }, OPERATIONS);
    store[method] = async () => Promise.reject(new Error('replaced')) as never;
    expect(answersAtOnce(store)).toBe(undefined);
  });

  it('keeps standing for a store whose renew was replaced, which the operations do not cover', () => {
    const store = plainStore();
    answerAtOnce(store, { begin: store.begin, complete: store.complete, release: store.release }, OPERATIONS);
    store.renew = async () => false;
    expect(answersAtOnce(store)).toBe(OPERATIONS);
  });

  it("registers the memory store's own operations, by a symbol of the global registry", () => {
    const store = new MemoryDedupStore();
    const registered = (store as unknown as Record<symbol, { operations: AnswersAtOnce }>)[Symbol.for('svc-webhooks.dedup-store.answers-at-once')];
    expect(answersAtOnce(store)).toBe(registered?.operations);
    expect(answersAtOnce(store)).not.toBe(undefined);
  });
});
