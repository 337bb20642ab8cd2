/** Telling an object with fields from null, arrays and the other values JSON holds. */
import { describe, expect, it } from 'vitest';
import { isRecord } from '../../src/base/record.js';

describe('isRecord', () => {
  it('takes an object with fields, or none, whatever its prototype', () => {
    expect([{}, { id: 'evt_1' }, Object.create(null), new Map()].map(isRecord)).toEqual([true, true, true, true]);
  });

  it('refuses null, arrays and every value that is no object', () => {
    expect([null, undefined, [], [{}], 'evt_1', 5, true, () => ({})].map(isRecord)).toEqual([false, false, false, false, false, false, false, false]);
  });
});
