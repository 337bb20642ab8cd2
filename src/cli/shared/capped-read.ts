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
