/** What a command of the command line is, and its exit codes. */
import type { CliIO } from './io.js';

/** One subcommand of the `svc-webhooks` bin. */
export interface Command {
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** The whole help text: usage, options, exit status. */
  readonly help: string;
  /** Runs with the arguments after the command's name; answers the exit status. */
  run(args: readonly string[], io: CliIO): Promise<number>;
}

/** Exit statuses shared by every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
