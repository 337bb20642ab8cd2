/** Deadlines on a fake clock: the queue that shares one timer among many waits, and the first of a wait and its deadline to come wins. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { beforeDeadline, DeadlineQueue, unref, withinDeadline } from '../../src/base/deadlines.js';

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('beforeDeadline', () => {
  it('answers what the promise resolves to in time, and clears its timer', async () => {
    expect(await beforeDeadline(Promise.resolve('on time'), 1_000, () => 'late')).toBe('on time');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('passes on a rejection in time, and clears its timer', async () => {
    await expect(beforeDeadline(Promise.reject(new Error('failed')), 1_000, () => 'late')).rejects.toThrow('failed');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers what late returns once the time is up, not before', async () => {
    const waiting = beforeDeadline(new Promise(() => undefined), 1_000, () => 'late');
    let answer: unknown;
    void waiting.then((value) => (answer = value));
    await vi.advanceTimersByTimeAsync(999);
    expect(answer).toBe(undefined);
    await vi.advanceTimersByTimeAsync(1);
    expect(answer).toBe('late');
  });

  it('rejects with what late throws once the time is up', async () => {
    const queue = new DeadlineQueue(100);
    const answer = withinDeadline(queue, new Promise(() => undefined), () => {
      throw new Error('too late');
    });
    const settled = expect(answer).rejects.toThrow('too late');
    await vi.advanceTimersByTimeAsync(100);
    await settled;
  });
});

describe('DeadlineQueue', () => {
  it('calls late exactly ms after each start, in order, under one timer', async () => {
    const queue = new DeadlineQueue(100);
    const fired: string[] = [];
    queue.start(() => fired.push('a'));
    await vi.advanceTimersByTimeAsync(30);
    queue.start(() => fired.push('b'));
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(69);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(29);
    expect(fired).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(['a', 'b']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never calls a deadline cancelled in time, and stops its timer once nothing is left', async () => {
    const queue = new DeadlineQueue(100);
    const fired: number[] = [];
    for (let i = 0; i < 3; i++) queue.start(() => fired.push(i)).cancel();
    const kept = queue.start(() => fired.push(3));
    await vi.advanceTimersByTimeAsync(100);
    expect(fired).toEqual([3]);
    kept.cancel();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('serves many deadlines over a long run with one timer at a time, and keeps firing those left', async () => {
    const queue = new DeadlineQueue(10);
    let fired = 0;
    for (let i = 0; i < 5_000; i++) {
      const deadline = queue.start(() => fired++);
      if (i % 2 === 0) deadline.cancel();
      if (i % 100 === 0) await vi.advanceTimersByTimeAsync(1);
      expect(vi.getTimerCount()).toBeLessThanOrEqual(1);
    }
    await vi.advanceTimersByTimeAsync(10);
    expect(fired).toBe(2_500);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('withinDeadline', () => {
  it('answers what the promise settles to in time, and cancels its deadline', async () => {
    const queue = new DeadlineQueue(100);
    const late = vi.fn(() => 'late');
    expect(await withinDeadline(queue, Promise.resolve('on time'), late)).toBe('on time');
    await expect(withinDeadline(queue, Promise.reject(new Error('failed')), late)).rejects.toThrow('failed');
    await vi.advanceTimersByTimeAsync(100);
    expect(late).not.toHaveBeenCalled();
  });

  it('answers what late returns once the time is up, not before', async () => {
    const queue = new DeadlineQueue(100);
    let answer: unknown;
    void withinDeadline(queue, new Promise(() => undefined), () => 'late').then((value) => (answer = value));
    await vi.advanceTimersByTimeAsync(99);
    expect(answer).toBe(undefined);
    await vi.advanceTimersByTimeAsync(1);
    expect(answer).toBe('late');
  });
});

describe('unref', () => {
  it("unrefs a Node timer, so it keeps no process alive, and passes on a timer that is a number", () => {
    vi.useRealTimers();
    const timer = setTimeout(() => undefined, 1_000);
    expect(unref(timer).hasRef()).toBe(false);
    clearTimeout(timer);
    expect(unref(42)).toBe(42);
  });
});

describe('DeadlineQueue, once drained and on Workers', () => {
  it('serves deadlines started after every earlier one fired', async () => {
    const queue = new DeadlineQueue(50);
    const fired: string[] = [];
    queue.start(() => fired.push('first'));
    await vi.advanceTimersByTimeAsync(50);
    queue.start(() => fired.push('second'));
    await vi.advanceTimersByTimeAsync(49);
    expect(fired).toEqual(['first']);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(['first', 'second']);
  });

  it('lets a deadline be cancelled after it fired (as withinDeadline does once late won) without touching those started since', async () => {
    const queue = new DeadlineQueue(50);
    const fired: string[] = [];
    const first = queue.start(() => fired.push('first'));
    await vi.advanceTimersByTimeAsync(50);
    for (const name of ['second', 'third']) queue.start(() => fired.push(name));
    first.cancel();
    await vi.advanceTimersByTimeAsync(50);
    expect(fired).toEqual(['first', 'second', 'third']);
  });

  it('cancels the right deadline, and none of the others, once the queue dropped the slots of 1,025 that fired', async () => {
    const queue = new DeadlineQueue(100);
    const fired: number[] = [];
    const early = Array.from({ length: 1_025 }, (_, i) => queue.start(() => fired.push(i)));
    await vi.advanceTimersByTimeAsync(50);
    const later = Array.from({ length: 3 }, (_, i) => queue.start(() => fired.push(2_000 + i)));
    // The 1,025 fire while 3 wait: more than half the slots are spent, and the queue drops them.
    await vi.advanceTimersByTimeAsync(50);
    expect(fired).toHaveLength(1_025);
    for (const deadline of early) deadline.cancel();
    later[1]!.cancel();
    await vi.advanceTimersByTimeAsync(50);
    expect(fired.slice(1_025)).toEqual([2_000, 2_002]);
  });

  it('sleeps until the next deadline is due, rather than waking each millisecond', async () => {
    const queue = new DeadlineQueue(100);
    queue.start(() => undefined);
    await vi.advanceTimersByTimeAsync(60);
    queue.start(() => undefined);
    const armed = vi.spyOn(globalThis, 'setTimeout');
    await vi.advanceTimersByTimeAsync(100);
    // Once at 100 ms for the second deadline, due at 160 ms; nothing after it.
    expect(armed.mock.calls.map(([, delay]) => delay)).toEqual([60]);
  });

  it('gives each deadline a timer of its own on Workers, where a timer dies with the request that set it', async () => {
    vi.resetModules();
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' });
    try {
      const { DeadlineQueue: WorkersQueue } = await import('../../src/base/deadlines.js');
      const queue = new WorkersQueue(100);
      const fired: number[] = [];
      const first = queue.start(() => fired.push(1));
      queue.start(() => fired.push(2));
      expect(vi.getTimerCount()).toBe(2);
      first.cancel();
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(100);
      expect(fired).toEqual([2]);
    } finally {
      vi.unstubAllGlobals();
      vi.resetModules();
    }
  });
});
