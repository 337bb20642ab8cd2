import { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { UsageError } from './args.js';
import type { CliIO } from './io.js';

/**
 * The bytes an option names: `@path` reads a file, `-` reads standard input,
 * anything else is the text itself (as UTF-8).
 */
export async function readInput(spec: string, option: string, io: CliIO): Promise<Buffer> {
  if (spec === '-') return io.stdin();
  if (!spec.startsWith('@')) return Buffer.from(spec);
  try {
    return await readFile(spec.slice(1));
  } catch (error) {
    // Stryker disable next-line StringLiteral: node:fs errors carry a code; the fallback only words a message no read produces.
    const reason = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`--${option}: cannot read ${spec.slice(1)} (${reason})`);
  }
}
