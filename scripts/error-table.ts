/**
 * The README's table of error codes, written from `ERROR_CODES` in
 * src/core/errors.ts, the one table of codes: `npm run docs` rewrites it
 * between its markers, and `npm run check:docs` fails when it differs.
 */
import { ERROR_CODES } from '../src/core/errors.js';

/** The markers the table stands between in README.md. */
export const TABLE_START = '<!-- error codes: written by npm run docs from src/core/errors.ts -->';
export const TABLE_END = '<!-- end of error codes -->';

/** The table, as Markdown: one row per code, in the order of `ERROR_CODES`. */
export function errorTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, { status, errorClass, when }]) => `| \`${code}\` | ${status} | \`${errorClass}\` | ${when} |`);
  return ['| code | status | class | when |', '|---|---|---|---|', ...rows].join('\n');
}

/** `readme` with the table between its markers written afresh. Throws when the markers are missing. */
export function withErrorTable(readme: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start === -1 || end < start) throw new Error(`README.md has no error table between ${TABLE_START} and ${TABLE_END}`);
  return `${readme.slice(0, start + TABLE_START.length)}\n${errorTable()}\n${readme.slice(end)}`;
}
