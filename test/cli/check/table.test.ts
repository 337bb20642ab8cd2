import { describe, expect, it } from 'vitest';
import { formatTable } from '../../../src/cli/check/table.js';

describe('formatTable', () => {
  it('pads every column but the last, two spaces apart', () => {
    expect(formatTable(['a', 'bb', 'c'], [['long', 'x', 'tail text'], ['', '', '']])).toEqual(['a     bb  c', 'long  x   tail text', '']);
  });

  it('sizes each column to its widest cell, a missing cell counting as empty', () => {
    expect(formatTable(['id', 'check', 'detail'], [['a'], ['long id', 'x', 'tail']])).toEqual(['id       check  detail', 'a', 'long id  x      tail']);
  });

  it('leaves no trailing blanks, even after empty cells', () => {
    expect(formatTable(['a', 'b'], [['x  ', '  '], ['', 'y ']])).toEqual(['a    b', 'x', '     y']);
  });
});
