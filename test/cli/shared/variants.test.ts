import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { bodyVariants, keyVariants } from '../../../src/cli/shared/variants.js';

const text = ({ variants }: { variants: readonly { change?: string; bytes: Buffer }[] }) => variants.map(({ change, bytes }) => [change ?? 'as given', bytes.toString('latin1')]);

describe('keyVariants', () => {
  it('gives the decoded key of a whsec_ secret, then the whole string and the undecoded part as keys', () => {
    expect(keyVariants('whsec_a2V5').map(({ mistake, key }) => [mistake ?? 'spec', key.toString()])).toEqual([
      ['spec', 'key'],
      ['prefix_kept', 'whsec_a2V5'],
      ['not_base64_decoded', 'a2V5'],
    ]);
  });

  it('gives a legacy secret as its UTF-8 bytes, then base64-decoded', () => {
    expect(keyVariants('a2V5é').map(({ mistake, key }) => [mistake ?? 'spec', [...key]])).toEqual([
      ['spec', [...Buffer.from('a2V5é', 'utf8')]],
      ['base64_decoded', [...Buffer.from('key')]],
    ]);
  });

  it('leaves out a mistaken key that decodes to nothing', () => {
    expect(keyVariants('!!!').map(({ mistake }) => mistake ?? 'spec')).toEqual(['spec']);
  });
});

describe('bodyVariants', () => {
  it('gives a JSON body without its final newline, then compact and indented by 2 and by 4', () => {
    expect(text(bodyVariants(Buffer.from('{"a": [1]}\r\n')))).toEqual([
      ['as given', '{"a": [1]}\r\n'],
      ['final_newline_removed', '{"a": [1]}'],
      ['compact_json', '{"a":[1]}'],
      ['pretty_json_2', '{\n  "a": [\n    1\n  ]\n}'],
      ['pretty_json_4', '{\n    "a": [\n        1\n    ]\n}'],
    ]);
  });

  it('leaves out each change that gives the bytes back', () => {
    expect(text(bodyVariants(Buffer.from('{"a":1}')))).toEqual([
      ['as given', '{"a":1}'],
      ['pretty_json_2', '{\n  "a": 1\n}'],
      ['pretty_json_4', '{\n    "a": 1\n}'],
    ]);
  });

  it('takes only a final newline off a body that is not JSON, byte for byte', () => {
    expect(text(bodyVariants(Buffer.from('a\nb\xe9\n', 'latin1')))).toEqual([
      ['as given', 'a\nb\xe9\n'],
      ['final_newline_removed', 'a\nb\xe9'],
    ]);
    expect(text(bodyVariants(Buffer.from('a\nb')))).toEqual([['as given', 'a\nb']]);
  });
});

describe('bodyVariants: its bounds', () => {
  const nested = (depth: number): Buffer => Buffer.from(`${'['.repeat(depth)}0${']'.repeat(depth)}`);
  const changes = ({ variants }: ReturnType<typeof bodyVariants>) => variants.map(({ change }) => change ?? 'as given');
  const changedBytes = ({ variants }: ReturnType<typeof bodyVariants>) => variants.slice(1).reduce((sum, { bytes }) => sum + bytes.length, 0);
  /** A JSON array `depth` deep holding `width` zeros at the bottom: indenting it costs about `depth` times its bytes. */
  const deepAndWide = (depth: number, width: number): Buffer => Buffer.from(`${'['.repeat(depth - 1)}[${Array(width).fill(0).join(',')}]${']'.repeat(depth - 1)}`);

  it('prints JSON nested 64 levels deep again, and none nested 65 or 6,000 deep, saying so', () => {
    expect([changes(bodyVariants(nested(64))), bodyVariants(nested(64)).skipped]).toEqual([['as given', 'pretty_json_2', 'pretty_json_4'], undefined]);
    for (const depth of [65, 6000]) {
      const variants = bodyVariants(nested(depth));
      expect([changes(variants), variants.skipped]).toEqual([['as given'], { changes: ['compact_json', 'pretty_json_2', 'pretty_json_4'], reason: 'depth' }]);
    }
  });

  it('prints changed bodies of at most 1 MiB together for a small body, leaving out the rest, saying so', () => {
    // 10 KB whose 2-space indenting takes about 0.4 MB, and 4-space 0.8 MB.
    const body = deepAndWide(40, 5000);
    const variants = bodyVariants(body);
    expect([changes(variants), variants.skipped]).toEqual([['as given', 'pretty_json_2'], { changes: ['pretty_json_4'], reason: 'bytes' }]);
    expect(changedBytes(variants)).toBeLessThanOrEqual(1024 * 1024);
    // One that fits whole is printed whole.
    expect(changes(bodyVariants(deepAndWide(40, 3000)))).toEqual(['as given', 'pretty_json_2', 'pretty_json_4']);
  });

  it('prints changed bodies of at most 4 times the bytes of a body past 256 KiB', () => {
    // 1.5 MiB, pretty-printed in a few bytes more each way: 4.5 MiB together, within 6 MiB.
    const flat = Buffer.from(JSON.stringify({ a: 'x'.repeat(1.5 * 1024 * 1024) }, null, 1));
    expect(changes(bodyVariants(flat))).toEqual(['as given', 'compact_json', 'pretty_json_2', 'pretty_json_4']);
    // 600 KB of zeros in one array: compact as given, 2-space 1.5 MB, 4-space 2.1 MB more, past 2.4 MB.
    const wide = deepAndWide(1, 300_000);
    const variants = bodyVariants(wide);
    expect([changes(variants), variants.skipped]).toEqual([['as given', 'pretty_json_2'], { changes: ['pretty_json_4'], reason: 'bytes' }]);
    expect(changedBytes(variants)).toBeLessThanOrEqual(4 * wide.length);
  });
});
