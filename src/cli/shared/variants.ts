/**
 * The usual ways a key or a body goes wrong between a sender and a receiver,
 * as concrete bytes to try a signature against.
 */
import { Buffer } from 'node:buffer';
import { decodeSecret } from '../../core/secret.js';

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
  readonly key: Buffer;
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

export interface BodyVariant {
  /** Absent for the bytes as given. */
  readonly change?: BodyChange;
  readonly bytes: Buffer;
}

/** The body as given, then each changed body that differs from it. */
export function bodyVariants(body: Buffer): BodyVariant[] {
  // The smallest change first: a body that gained a newline also re-serializes to the signed bytes.
  const withoutFinalNewline = Buffer.from(body.toString('latin1').replace(/\r?\n$/, ''), 'latin1');
  const changed: BodyVariant[] = [{ change: 'final_newline_removed', bytes: withoutFinalNewline }];
  for (const value of parseJson(body)) {
    changed.push(
      { change: 'compact_json', bytes: Buffer.from(JSON.stringify(value)) },
      { change: 'pretty_json_2', bytes: Buffer.from(JSON.stringify(value, null, 2)) },
      { change: 'pretty_json_4', bytes: Buffer.from(JSON.stringify(value, null, 4)) },
    );
  }
  return [{ bytes: body }, ...changed.filter(({ bytes }) => !bytes.equals(body))];
}

/** The body's JSON value as a list of one, or no value when the body is not JSON. */
function parseJson(body: Buffer): unknown[] {
  try {
    return [JSON.parse(body.toString('utf8'))];
  } catch {
    return [];
  }
}
