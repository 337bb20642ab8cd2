/**
 * Reading what a command is handed (a file, standard input) within a bound:
 * `--request @/dev/zero` or an endless pipe must end in a usage error, not
 * in the process running out of memory.
 */
import { Buffer } from 'node:buffer';
import { UsageError } from './args.js';

/** The most a command reads of one input: 4× a receiver's default body limit (1 MiB), so headers and any real capture fit. */
export const MAX_INPUT_BYTES = 4 * 1024 * 1024;

/**
 * Reads `source` to its end, refusing it once it passes `MAX_INPUT_BYTES`; `what` names it in the error.
 * `counted` is told the bytes read so far as each piece comes, and may throw to stop the read.
 */
export async function readCapped(source: AsyncIterable<unknown>, what: string, counted: (size: number) => void = () => {}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of source) {
    // A stream with an encoding set yields strings; bytes are taken as they come, with no copy.
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.byteLength;
    // Leaving the loop early destroys the stream: nothing more is read.
    if (size > MAX_INPUT_BYTES) throw new UsageError(`${what} is larger than ${MAX_INPUT_BYTES / 1024 / 1024} MiB: that is no webhook`);
    counted(size);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, size);
}

/**
 * The most a line of input holds: one record `svc-webhooks dev --save` writes, whose body (at most
 * `MAX_INPUT_BYTES`, 4 MiB) is in base64 (5⅓ MiB), beside its headers and an answer of at most 64 KiB.
 */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

/** How far into a line past `MAX_LINE_BYTES` its end is sought: one with no end by 16 MiB, such as `/dev/zero`, ends the reading. */
export const MAX_SOUGHT_LINE_BYTES = 16 * 1024 * 1024;

/** A line of input and its number from 1: its bytes, or, past `MAX_LINE_BYTES`, `skipped` (passed over to its end) or `endless` (no end within `MAX_SOUGHT_LINE_BYTES`, the last line read). */
export type InputLine = { readonly number: number; readonly bytes: Buffer } | { readonly number: number; readonly over: 'skipped' | 'endless' };

/**
 * The lines of `source`, split at `\n`, as they stream in: a line holds at most `MAX_LINE_BYTES` in memory,
 * and the bytes of a longer one are dropped as they come.
 */
export async function* cappedLines(source: AsyncIterable<unknown>): AsyncGenerator<InputLine> {
  let number = 1;
  let pieces: Buffer[] = [];
  let size = 0;
  const line = (): InputLine => (size > MAX_LINE_BYTES ? { number, over: 'skipped' } : { number, bytes: Buffer.concat(pieces, size) });
  for await (const chunk of source) {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    for (let end = bytes.indexOf(0x0a); ; end = bytes.indexOf(0x0a)) {
      const piece = end === -1 ? bytes : bytes.subarray(0, end);
      size += piece.byteLength;
      if (size <= MAX_LINE_BYTES) pieces.push(piece);
      else pieces = [];
      if (end === -1) break;
      yield line();
      number += 1;
      pieces = [];
      size = 0;
      bytes = bytes.subarray(end + 1);
    }
    // Leaving the loop early destroys the stream: nothing more is read.
    if (size > MAX_SOUGHT_LINE_BYTES) {
      yield { number, over: 'endless' };
      return;
    }
  }
  if (size > 0) yield line();
}
