import { Buffer } from 'node:buffer';
import { UsageError } from './args.js';

/** Where a command writes and reads: the process's streams, or a test's buffers. */
export interface CliIO {
  /** Writes one line to standard output. */
  out(line: string): void;
  /** Writes one line to standard error. */
  err(line: string): void;
  /** Standard input, read to its end. */
  stdin(): Promise<Buffer>;
}

/** The process's own streams. */
export const processIO: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  async stdin() {
    // Waiting on a terminal for a body nobody types looks like a hang.
    if (process.stdin.isTTY) throw new UsageError('standard input is a terminal: give the body with @file, or pipe it in');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  },
};
