/**
 * A Nest `LoggerService` that records each line Nest's `Logger` writes
 * through it, with its level and its context (`RouterExplorer`,
 * `WebhooksModule`), for the specs that read what an app logged at bootstrap.
 */
import type { LoggerService } from '@nestjs/common';

/** One line written through a `recordingNestLogger`. */
export interface NestLine {
  readonly level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  readonly message: string;
  /** The `Logger`'s context: the last argument Nest passes. */
  readonly context: unknown;
}

/** A logger for `NestFactory.create(module, { logger })`, and the lines it was given, in order. */
export function recordingNestLogger(): { readonly logger: LoggerService; readonly lines: NestLine[]; of(context: string): string[] } {
  const lines: NestLine[] = [];
  const record =
    (level: NestLine['level']) =>
    (message: unknown, ...params: unknown[]): void =>
      void lines.push({ level, message: String(message), context: params.at(-1) });
  return {
    lines,
    logger: { log: record('log'), error: record('error'), warn: record('warn'), debug: record('debug'), verbose: record('verbose'), fatal: record('fatal') },
    of: (context) => lines.filter((line) => line.context === context).map(({ message }) => message),
  };
}
