/** Reading a stream within a bound: past it, a usage error rather than memory without end. */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/shared/args.js';
import { MAX_INPUT_BYTES, readCapped } from '../../../src/cli/shared/capped-read.js';

describe('readCapped', () => {
  it('refuses standard input past the bound, and reads one at the bound whole', async () => {
    async function* stream(bytes: number) {
      for (let sent = 0; sent < bytes; sent += 64 * 1024) yield Buffer.alloc(Math.min(64 * 1024, bytes - sent));
    }
    await expect(readCapped(stream(MAX_INPUT_BYTES + 1), 'standard input')).rejects.toThrow(new UsageError('standard input is larger than 4 MiB: that is no webhook'));
    expect((await readCapped(stream(MAX_INPUT_BYTES), 'standard input')).length).toBe(MAX_INPUT_BYTES);
  });

  it('reads the strings of a stream with an encoding as their UTF-8 bytes, counting bytes, not characters', async () => {
    async function* text() {
      yield 'é';
      yield Buffer.from('-');
      yield 'ü'.repeat(MAX_INPUT_BYTES / 2);
    }
    await expect(readCapped(text(), 'the file')).rejects.toThrow(new UsageError('the file is larger than 4 MiB: that is no webhook'));
    async function* small() {
      yield 'é';
      yield new Uint8Array([0x2d]);
    }
    expect((await readCapped(small(), 'the file')).toString()).toBe('é-');
  });
});

describe('readCapped: counting as it reads', () => {
  it('tells the bytes read so far as each piece comes, and stops reading where that throws', async () => {
    const pieces = ['ab', 'cde', 'f', 'gh'];
    let pulled = 0;
    async function* stream() {
      for (const piece of pieces) {
        pulled += 1;
        yield Buffer.from(piece);
      }
    }
    const told: number[] = [];
    expect((await readCapped(stream(), 'the body', (size) => void told.push(size))).toString()).toBe('abcdefgh');
    expect(told).toEqual([2, 5, 6, 8]);
    pulled = 0;
    const stop = new Error('enough');
    const refuse = (size: number): void => {
      if (size > 4) throw stop;
    };
    await expect(readCapped(stream(), 'the body', refuse)).rejects.toBe(stop);
    expect(pulled).toBe(2);
  });
});
