/** The README's table of error codes, from ERROR_CODES: one row per code, rewritten between its markers, and current in README.md. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorTable, TABLE_END, TABLE_START, withErrorTable } from '../../scripts/error-table.js';
import { ERROR_CODES } from '../../src/index.js';

describe('errorTable', () => {
  it('has a header and one row per code, in the order of ERROR_CODES, with status, class and when', () => {
    const lines = errorTable().split('\n');
    expect(lines.slice(0, 2)).toEqual(['| code | status | class | when |', '|---|---|---|---|']);
    expect(lines).toHaveLength(2 + Object.keys(ERROR_CODES).length);
    expect(lines[2]).toBe(`| \`missing_header\` | 400 | \`WebhookVerificationError\` | ${ERROR_CODES.missing_header.when} |`);
    expect(lines.at(-1)).toBe(`| \`handoff_failed\` | 503 | \`WebhookHandlerError\` | ${ERROR_CODES.handoff_failed.when} |`);
  });
});

describe('withErrorTable', () => {
  it('writes the table between the markers, leaving the rest, and changes nothing written already', () => {
    const readme = `# title\n\n${TABLE_START}\n| old |\n${TABLE_END}\n\nafter\n`;
    const written = withErrorTable(readme);
    expect(written).toBe(`# title\n\n${TABLE_START}\n${errorTable()}\n${TABLE_END}\n\nafter\n`);
    expect(withErrorTable(written)).toBe(written);
  });

  it('refuses a README without the markers, or with them out of order', () => {
    expect(() => withErrorTable('# no table')).toThrow(/no error table/);
    expect(() => withErrorTable(`${TABLE_END}\n${TABLE_START}`)).toThrow(/no error table/);
  });

  it("finds the repository's README current", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(withErrorTable(readme)).toBe(readme);
  });
});
