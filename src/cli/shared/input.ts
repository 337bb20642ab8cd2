/** An input the command line reads: a value, `@file` or `-` for standard input, within the read bound. */
import { Buffer } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { UsageError } from './args.js';
import { readCapped } from './capped-read.js';
import type { CliIO } from './io.js';

/**
 * The bytes an option names: `@path` reads a file, `-` reads standard input,
 * anything else is the text itself (as UTF-8). A file or input past
 * `MAX_INPUT_BYTES` is refused.
 */
export async function readInput(spec: string, option: string, io: CliIO): Promise<Buffer> {
  if (spec === '-') return io.stdin();
  if (!spec.startsWith('@')) return Buffer.from(spec);
  try {
    return await readCapped(createReadStream(spec.slice(1)), `--${option} ${spec}`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // Stryker disable next-line StringLiteral: node:fs errors carry a code; the fallback only words a message no read produces.
    const reason = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`--${option}: cannot read ${spec.slice(1)} (${reason})`);
  }
}
