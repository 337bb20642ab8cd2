/**
 * A recorded delivery as a command for a POSIX shell that sends it again
 * with curl: its end-to-end headers as `-H` arguments and its bytes on
 * standard input. Every word the sender wrote is single-quoted (a quote in
 * it closed, escaped and reopened), so that nothing in a header or a body
 * is read by the shell; a body that is not UTF-8 text, or holds a NUL,
 * goes through printf's octal escapes, byte for byte.
 */
import type { Buffer } from 'node:buffer';
import { endToEndHeaders } from '../shared/replayed-request.js';

/** The command that POSTs `body` with `headers` to `url`. */
export function curlCommand(url: string, headers: Readonly<Record<string, string>>, body: Buffer): string {
  const sent = endToEndHeaders(headers);
  // curl sends a header given empty only as `name;`; without a type of the request's own, it would add one.
  const words = Object.entries(sent).map(([name, value]) => `-H ${quoted(value === '' ? `${name};` : `${name}: ${value}`)}`);
  if (sent['content-type'] === undefined) words.push(`-H ${quoted('content-type:')}`);
  return [`${printed(body)} | curl ${quoted(url)}`, ...words, '--data-binary @-'].join(' \\\n  ');
}

/** `text` as one word of a POSIX shell, whatever it holds. */
function quoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** printf writing `body` byte for byte: as text when it is UTF-8 without NUL, else in octal escapes. */
function printed(body: Buffer): string {
  const text = utf8(body);
  if (text !== undefined && !text.includes('\0')) return `printf '%s' ${quoted(text)}`;
  // In printf's format: printable ASCII as it is, but for the quote, the backslash and the percent sign.
  let format = '';
  for (const byte of body) format += byte >= 0x20 && byte < 0x7f && byte !== 0x27 && byte !== 0x5c && byte !== 0x25 ? String.fromCharCode(byte) : `\\${byte.toString(8).padStart(3, '0')}`;
  return `printf '${format}'`;
}

function utf8(body: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    return undefined;
  }
}
