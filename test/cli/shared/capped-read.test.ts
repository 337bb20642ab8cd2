/** Reading a stream within a bound: past it, a usage error rather than memory without end. */
import { Buffer } from 'node:buffer';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/shared/args.js';
import { cappedLines, readCapped, type InputLine } from '../../../src/cli/shared/capped-read.js';

describe('readCapped', () => {
  it('refuses standard input past the bound, and reads one at the bound whole', async () => {
    async function* stream(bytes: number) {
      for (let sent = 0; sent < bytes; sent += 64 * 1024) yield Buffer.alloc(Math.min(64 * 1024, bytes - sent));
    }
    await expect(readCapped(stream(4 * 1024 * 1024 + 1), 'standard input')).rejects.toThrow(new UsageError('standard input is larger than 4 MiB: that is no webhook'));
    expect((await readCapped(stream(4 * 1024 * 1024), 'standard input')).length).toBe(4 * 1024 * 1024);
  });

  it('reads the strings of a stream with an encoding as their UTF-8 bytes, counting bytes, not characters', async () => {
    async function* text() {
      yield 'é';
      yield Buffer.from('-');
      yield 'ü'.repeat(2 * 1024 * 1024);
    }
    await expect(readCapped(text(), 'the file')).rejects.toThrow(new UsageError('the file is larger than 4 MiB: that is no webhook'));
    async function* small() {
      yield 'é';
      yield new Uint8Array([0x2d]);
    }
    expect((await readCapped(small(), 'the file')).toString()).toBe('é-');
  });
});

/** The lines `cappedLines` reads from `chunks`, each as its text or what passed the bound. */
async function linesOf(chunks: Iterable<Buffer | string> | AsyncIterable<Buffer | string>): Promise<Array<[number, string]>> {
  // Readable.from reads ahead: an async source is read as it is, so that what it yields is what was taken.
  const source = Symbol.asyncIterator in chunks ? chunks : Readable.from(chunks);
  const lines: Array<[number, string]> = [];
  const shown = (line: InputLine): string => ('bytes' in line ? line.bytes.toString() : line.over);
  for await (const line of cappedLines(source)) lines.push([line.number, shown(line)]);
  return lines;
}

describe('cappedLines', () => {
  it('numbers the lines from 1, blank ones included, joins a line cut across chunks, and reads a last line with no newline', async () => {
    expect(await linesOf(['a\n\nb', 'c\r\n', Buffer.from('dé'), '\n', 'e'])).toEqual([
      [1, 'a'],
      [2, ''],
      [3, 'bc\r'],
      [4, 'dé'],
      [5, 'e'],
    ]);
    expect(await linesOf(['a\n'])).toEqual([[1, 'a']]);
    expect(await linesOf([])).toEqual([]);
  });

  it('reads a line of 8 MiB whole, and passes over one of a byte more to read the next', async () => {
    const chunked = (bytes: number, chunk = 64 * 1024): Buffer[] => Array.from({ length: Math.ceil(bytes / chunk) }, (_, i) => Buffer.alloc(Math.min(chunk, bytes - i * chunk), 'x'));
    const lines = await linesOf([...chunked(8 * 1024 * 1024), '\n', ...chunked(8 * 1024 * 1024 + 1), '\nnext']);
    expect(lines.map(([number, text]) => [number, text.length])).toEqual([
      [1, 8 * 1024 * 1024],
      [2, 'skipped'.length],
      [3, 4],
    ]);
    expect(lines[1]).toEqual([2, 'skipped']);
  });

  it('stops reading a line with no end within 16 MiB, having read no more than that and a chunk', async () => {
    let read = 0;
    async function* endless() {
      for (;;) {
        read += 64 * 1024;
        yield Buffer.alloc(64 * 1024);
      }
    }
    expect(await linesOf(endless())).toEqual([[1, 'endless']]);
    expect(read).toBeLessThanOrEqual(16 * 1024 * 1024 + 64 * 1024);
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
