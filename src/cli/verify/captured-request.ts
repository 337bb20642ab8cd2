/** A captured HTTP request, as a proxy or a log saved it: its headers and raw body. */
import { Buffer } from 'node:buffer';
import { UsageError } from '../shared/args.js';
import { parseHeaderText, type HeaderLists } from '../shared/header-lines.js';
import { printable } from '../../base/printable.js';

/** A raw HTTP/1.1 request as captured: its headers and its body bytes. */
export interface CapturedRequest {
  readonly headers: HeaderLists;
  readonly body: Buffer;
}

const REQUEST_LINE = /^[A-Z]+ \S+ HTTP\/\d(?:\.\d)?$/;

/**
 * Splits a captured request into headers and body. The request line is
 * optional; lines may end in CRLF or LF (a capture saved by an editor); the
 * body is read by Content-Length, or de-chunked, or else is the rest.
 */
export function parseCapturedRequest(capture: Buffer, source: string): CapturedRequest {
  const crlf = capture.indexOf('\r\n\r\n');
  const lf = capture.indexOf('\n\n');
  const [headEnd, bodyStart] = crlf !== -1 && (lf === -1 || crlf < lf) ? [crlf, crlf + 4] : [lf, lf + 2];
  if (headEnd === -1) throw new UsageError(`${source}: no blank line ends the headers`);
  const lines = capture.subarray(0, headEnd).toString('latin1').split(/\r?\n/);
  if (REQUEST_LINE.test(lines[0]!)) lines.shift();
  const headers = parseHeaderText(lines.join('\n'), source);
  const rest = capture.subarray(bodyStart);

  if (headers['transfer-encoding']?.some((value) => /chunked/i.test(value))) return { headers, body: dechunk(rest, source) };
  const length = headers['content-length']?.[0];
  if (length === undefined) return { headers, body: rest };
  const bytes = /^\d+$/.test(length) ? Number(length) : Number.NaN;
  if (!(bytes <= rest.length)) throw new UsageError(`${source}: Content-Length is ${printable(length)} but ${rest.length} bytes follow the headers`);
  return { headers, body: rest.subarray(0, bytes) };
}

function dechunk(data: Buffer, source: string): Buffer {
  const chunks: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    // A chunk cut short leaves no size line after it: `subarray` stops at the end, and the next turn lands here.
    if (lineEnd === -1) throw new UsageError(`${source}: the chunked body ends before its last chunk`);
    const digits = data.subarray(at, lineEnd).toString('latin1').split(';')[0]!.trim();
    // Hex digits only (then extensions): parseInt would read "-6" as a step back, and loop for ever.
    if (!/^[0-9a-fA-F]{1,8}$/.test(digits)) throw new UsageError(`${source}: a chunk size that is no hex number`);
    const size = Number.parseInt(digits, 16);
    if (size === 0) return Buffer.concat(chunks);
    chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
