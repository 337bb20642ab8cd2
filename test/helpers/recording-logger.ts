/** A `WebhookLogger` that records each line it is given, by level, with its fields and message. */
import type { WebhookLogFields, WebhookLogger } from '../../src/index.js';

/** One line a `recordingLogger` was given. */
export type RecordedLine = readonly ['warn' | 'error', WebhookLogFields, string];

/** A logger of pino's shape and the lines it was given, in order. */
export function recordingLogger(): { readonly logger: WebhookLogger; readonly lines: RecordedLine[] } {
  const lines: RecordedLine[] = [];
  return {
    lines,
    logger: {
      warn: (fields, message) => void lines.push(['warn', fields, message]),
      error: (fields, message) => void lines.push(['error', fields, message]),
    },
  };
}
