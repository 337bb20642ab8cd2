import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { bodyVariants, keyVariants } from '../../../src/cli/shared/variants.js';

const text = (variants: { change?: string; bytes: Buffer }[]) => variants.map(({ change, bytes }) => [change ?? 'as given', bytes.toString('latin1')]);

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
