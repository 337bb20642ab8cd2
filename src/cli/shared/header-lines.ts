/** Headers as lines of text: read from a file or an argument, written for a terminal or a curl command. */
import { isRecord } from '../../base/record.js';
import { UsageError } from './args.js';
import { printable } from '../../base/printable.js';

/** The three headers of a signed request (spec section 5). */
export const HEADER_NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/**
 * Request headers by lower-case name, each with every value it was given.
 * Without a prototype: a header named `constructor` or `__proto__` is just a header.
 */
export type HeaderLists = Record<string, string[]>;

const noHeaders = (): HeaderLists => Object.create(null) as HeaderLists;

/**
 * Headers from text: `name: value` lines (as `sign` prints them and as in a
 * raw HTTP request), or a JSON object of names to values.
 */
export function parseHeaderText(text: string, source: string): HeaderLists {
  if (text.trimStart().startsWith('{')) return fromJson(text, source);
  const headers = noHeaders();
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new UsageError(`${source}: not a "name: value" header line: ${printable(line, 80)}`);
    add(headers, line.slice(0, colon), line.slice(colon + 1));
  }
  return headers;
}

function fromJson(text: string, source: string): HeaderLists {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${source}: starts with "{" but is not JSON`);
  }
  if (!isRecord(parsed)) throw new UsageError(`${source}: starts with "{" but is not a JSON object`);
  const headers = noHeaders();
  for (const [name, value] of Object.entries(parsed)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (typeof one !== 'string') throw new UsageError(`${source}: the value of "${printable(name)}" is not a string`);
      add(headers, name, one);
    }
  }
  return headers;
}

function add(headers: HeaderLists, name: string, value: string): void {
  const key = name.trim().toLowerCase();
  (headers[key] ??= []).push(value.trim());
}

/** Headers as `name: value` lines. */
export function headerLines(headers: Readonly<Record<string, string>>): string[] {
  return Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
}

/** Headers as curl arguments on one line, each quoted for a POSIX shell: `-H 'name: value' …`. */
export function curlArguments(headers: Readonly<Record<string, string>>): string {
  return headerLines(headers)
    .map((line) => `-H '${line.replaceAll("'", `'\\''`)}'`)
    .join(' ');
}
