/** beforeDeadline on a fake clock: the first to come wins, and no timer is left behind. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { beforeDeadline } from '../../src/receive/deadline.js';

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
});
