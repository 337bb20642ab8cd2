/**
 * The usual ways a key or a body goes wrong between a sender and a receiver,
 * as concrete bytes to try a signature against.
 */
import { Buffer } from 'node:buffer';
import { decodeSecret } from '../../core/secret.js';
import { jsonShape, printedBytes } from './printed-size.js';

const PREFIX = 'whsec_';

export type KeyMistake =
  /** The whole `whsec_…` string used as UTF-8 bytes. */
  | 'prefix_kept'
  /** The part after `whsec_` used as UTF-8 text, not base64-decoded. */
  | 'not_base64_decoded'
  /** A secret without the prefix base64-decoded: a legacy secret decoded, or a whsec_ secret given without its prefix. */
  | 'base64_decoded';

export interface KeyVariant {
  /** Absent for the key the spec derives (section 5, rule 3). */
  readonly mistake?: KeyMistake;
  readonly key: Uint8Array;
}

/** The spec's key for `secret`, then each mistaken key that is not empty. */
export function keyVariants(secret: string): KeyVariant[] {
  const spec = decodeSecret(secret);
  const mistakes: KeyVariant[] = secret.startsWith(PREFIX)
    ? [
        { mistake: 'prefix_kept', key: Buffer.from(secret) },
        { mistake: 'not_base64_decoded', key: Buffer.from(secret.slice(PREFIX.length)) },
      ]
    : [{ mistake: 'base64_decoded', key: Buffer.from(secret, 'base64') }];
  // Base64 text is longer than the bytes it decodes to, so a mistaken key never equals the spec's; it may be empty.
  return [{ key: spec }, ...mistakes.filter(({ key }) => key.length > 0)];
}

export type BodyChange =
  /** The bytes given, less a final newline. */
  | 'final_newline_removed'
  /** Parsed and printed again as compact JSON (`JSON.stringify(body)`). */
  | 'compact_json'
  /** Parsed and printed again with 2-space indentation. */
  | 'pretty_json_2'
  /** Parsed and printed again with 4-space indentation. */
  | 'pretty_json_4';

/** The changes that print the parsed body again. */
export type PrintChange = Exclude<BodyChange, 'final_newline_removed'>;

export interface BodyVariant {
  /** Absent for the bytes as given. */
  readonly change?: BodyChange;
  readonly bytes: Buffer;
}

/** Changes not tried, and why: the JSON nests past `MAX_JSON_DEPTH`, or printing them would pass the byte budget. */
export interface SkippedChanges {
  readonly changes: readonly PrintChange[];
  readonly reason: 'depth' | 'bytes';
}

/** The bodies to try a signature against, and the changes left untried. */
export interface BodyVariants {
  /** The body as given, then each changed body that differs from it. */
  readonly variants: readonly BodyVariant[];
  readonly skipped?: SkippedChanges;
}

/** The JSON changes, the indentation each prints with, smallest first. */
const PRINTS = [
  ['compact_json', 0],
  ['pretty_json_2', 2],
  ['pretty_json_4', 4],
] as const;

/** What the printed changes may hold together: 4 times the body's bytes, and 1 MiB for a body smaller than 256 KiB. */
export function printBudget(bodyBytes: number): number {
  return Math.max(1024 * 1024, 4 * bodyBytes);
}

/**
 * The body as given, then each changed body that differs from it, within bounds: a JSON body nested past
 * `MAX_JSON_DEPTH` is not printed again, and a print that would pass `printBudget` is left out. Printing
 * indents each line by its depth, so a small body may print to many times its size.
 */
export function bodyVariants(body: Buffer): BodyVariants {
  // The smallest change first: a body that gained a newline also re-serializes to the signed bytes. A view, not a copy.
  const newline = body.at(-1) === 0x0a ? (body.at(-2) === 0x0d ? 2 : 1) : 0;
  const [json] = parseJson(body).map((value) => printedChanges(value, printBudget(body.length)));
  const changed = [{ change: 'final_newline_removed', bytes: body.subarray(0, body.length - newline) } as const, ...(json?.printed ?? [])];
  const variants = [{ bytes: body }, ...changed.filter(({ bytes }) => !bytes.equals(body))];
  return json?.skipped === undefined ? { variants } : { variants, skipped: json.skipped };
}

/** `value` printed as each JSON change, smallest first, while they fit in `budget` bytes together. */
function printedChanges(value: unknown, budget: number): { readonly printed: BodyVariant[]; readonly skipped?: SkippedChanges } {
  const shape = jsonShape(value);
  if (shape === undefined) return { printed: [], skipped: { changes: PRINTS.map(([change]) => change), reason: 'depth' } };
  const printed: BodyVariant[] = [];
  const skipped: PrintChange[] = [];
  let left = budget;
  for (const [change, indent] of PRINTS) {
    const size = printedBytes(shape, indent);
    if (size > left) skipped.push(change);
    else {
      left -= size;
      printed.push({ change, bytes: Buffer.from(JSON.stringify(value, null, indent)) });
    }
  }
  return skipped.length === 0 ? { printed } : { printed, skipped: { changes: skipped, reason: 'bytes' } };
}

/** The body's JSON value as a list of one, or no value when the body is not JSON. */
function parseJson(body: Buffer): unknown[] {
  try {
    return [JSON.parse(body.toString('utf8'))];
  } catch {
    return [];
  }
}
