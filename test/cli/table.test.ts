import { describe, expect, it } from 'vitest';
import { formatTable } from '../../src/cli/table.js';

describe('formatTable', () => {
  it('sizes each column to its widest cell, a missing cell counting as empty', () => {
    expect(formatTable(['id', 'check', 'detail'], [['a'], ['long id', 'x', 'tail']])).toEqual(['id       check  detail', 'a', 'long id  x      tail']);
  });

  it('leaves no trailing blanks, even after empty cells', () => {
    expect(formatTable(['a', 'b'], [['x  ', '  '], ['', 'y ']])).toEqual(['a    b', 'x', '     y']);
  });
});
