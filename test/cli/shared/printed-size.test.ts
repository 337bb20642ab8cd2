/** The bytes of JSON printed again, counted without printing it: exact, and refused past the depth bound. */
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonShape, printedBytes } from '../../../src/cli/shared/printed-size.js';

const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));

describe('printedBytes', () => {
  it('counts what JSON.stringify prints, compact and indented, byte for byte', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 2, 4), (value, indent) => {
        // As a body parses: -0 and the like come back as JSON gives them.
        const parsed: unknown = JSON.parse(JSON.stringify(value));
        expect(printedBytes(jsonShape(parsed)!, indent)).toBe(Buffer.byteLength(JSON.stringify(parsed, null, indent)));
      }),
      { numRuns: 300 },
    );
  });

  it('counts escapes, lone surrogates, numbers printed longer than written and keys', () => {
    const value: unknown = JSON.parse('{"é\\u0000":["\\ud800",1e21,1E2,[],{}],"":{"a":[[1]]}}');
    for (const indent of [0, 2, 4]) expect(printedBytes(jsonShape(value)!, indent)).toBe(Buffer.byteLength(JSON.stringify(value, null, indent)));
  });
});

describe('jsonShape', () => {
  it('takes JSON nested 64 levels deep, and refuses 65 without printing or recursing', () => {
    expect(printedBytes(jsonShape(nested(64))!, 2)).toBe(Buffer.byteLength(JSON.stringify(nested(64), null, 2)));
    expect(jsonShape(nested(65))).toBeUndefined();
    expect(jsonShape(JSON.parse(`{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}`))).toBeUndefined();
  });
});
