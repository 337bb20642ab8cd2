/** The command line's standard streams, behind one interface that tests can replace. */
import { Buffer } from 'node:buffer';
import { UsageError } from './args.js';
import { readCapped } from './capped-read.js';

/** Where a command writes and reads: the process's streams, or a test's buffers. */
export interface CliIO {
  /** Writes one line to standard output. */
  out(line: string): void;
  /** Writes one line to standard error. */
  err(line: string): void;
  /** Standard input, read to its end. */
  stdin(): Promise<Buffer>;
}

/** Standard input as the process holds it: a terminal says so with `isTTY`. */
export type InputStream = NodeJS.ReadableStream & { readonly isTTY?: boolean };

/** The three streams a `CliIO` reads and writes. */
export interface Streams {
  readonly stdin: InputStream;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

/** A `CliIO` over three streams; `stdin` is looked up only when a command reads it. */
export function streamIO(streams: Streams): CliIO {
  const { stdout, stderr } = streams;
  return {
    out: (line) => stdout.write(`${line}\n`),
    err: (line) => stderr.write(`${line}\n`),
    async stdin() {
      // Waiting on a terminal for a body nobody types looks like a hang.
      const { stdin } = streams;
      if (stdin.isTTY) throw new UsageError('standard input is a terminal: give the body with @file, or pipe it in');
      return readCapped(stdin, 'standard input');
    },
  };
}

/** The process's own streams. */
export const processIO: CliIO = streamIO({
  // A getter: Node opens process.stdin on first access, and only a command that reads it should.
  get stdin() {
    return process.stdin;
  },
  stdout: process.stdout,
  stderr: process.stderr,
});
