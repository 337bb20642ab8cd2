/** A diagnosis in plain words: the verdict, the most likely cause, and the timestamp. */
import type { WebhookVerificationError } from '../../core/errors.js';
import { TOLERANCE_SECONDS, type Diagnosis, type SignatureFinding } from './diagnose.js';
import { MAX_JSON_DEPTH } from './printed-size.js';
import type { BodyChange, KeyMistake, PrintChange, SkippedChanges } from './variants.js';
import { printable } from '../../base/printable.js';

const KEY_MISTAKES: Record<KeyMistake, string> = {
  prefix_kept:
    'the signature was made with the whole secret, "whsec_" prefix included, used as UTF-8 text. The key is the ' +
    'base64-decoded part after "whsec_" (spec section 5, rule 3): the signer used the secret string as it is, ' +
    'and a receiver doing the same refuses every real delivery.',
  not_base64_decoded:
    'the signature was made with the part after "whsec_" used as UTF-8 text, not base64-decoded. The key is that ' +
    'part base64-decoded (spec section 5, rule 3).',
  base64_decoded:
    'the signature was made with this secret base64-decoded. A secret without the "whsec_" prefix is a legacy ' +
    'secret, used as its UTF-8 bytes (spec section 5, rule 3): either this is a whsec_ secret given without its ' +
    'prefix (give it as whsec_…), or the signer base64-decoded a legacy secret.',
};

const FORMATS: Record<PrintChange, string> = {
  compact_json: 'compact JSON',
  pretty_json_2: 'JSON indented with 2 spaces',
  pretty_json_4: 'JSON indented with 4 spaces',
};

/** What the search left untried, and why: the cause it gives may lie there. */
function skippedLine({ changes, reason }: SkippedChanges): string {
  const names = changes.map((change) => FORMATS[change]);
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names[0];
  const why = reason === 'depth' ? `it nests deeper than ${MAX_JSON_DEPTH} levels` : "the bodies tried may hold 4 times the body's bytes together (1 MiB for a body smaller than 256 KiB)";
  return `not tried: the body printed again as ${list}: ${why}`;
}

function bodyChange(change: BodyChange): string {
  if (change === 'final_newline_removed') {
    return (
      'the signature matches the body without its final newline: the bytes given end with one that was not ' +
      'signed (an editor or a shell echo adds it). Give the body exactly as received.'
    );
  }
  return (
    `the signature matches the body parsed and printed again as ${FORMATS[change]}, not the bytes given: the JSON ` +
    'was re-serialized on one side. Either the body given here (or the one the receiver verifies) went through a ' +
    'JSON parser and back, or the sender signed a re-serialization rather than the bytes it sent. Verify the raw ' +
    'request body, before any JSON body parser.'
  );
}

function signatureCause(finding: Exclude<SignatureFinding, { kind: 'valid' }>): string {
  switch (finding.kind) {
    case 'variant': {
      const parts = [finding.mistake && KEY_MISTAKES[finding.mistake], finding.change && bodyChange(finding.change)];
      return parts.filter(Boolean).join(' Also, ');
    }
    case 'no_v1_entry':
      return (
        'webhook-signature holds no well-formed "v1,<base64>" entry (an HMAC-SHA256 is 44 base64 characters): ' +
        'the sender does not sign the Standard Webhooks way, or something on the way rewrote the header.'
      );
    case 'other_secret':
      return (
        'the request was signed with a different secret, most likely another endpoint\'s (each endpoint has its ' +
        'own). No variant matches: not the secret given, nor its usual mistaken forms (prefix kept, not ' +
        'base64-decoded, base64-decoded), nor the body re-serialized as JSON or without a final newline. Check ' +
        'which endpoint this URL belongs to; during a rotation, give both secrets with --secret twice.'
      );
  }
}

function clockCause(behind: number, timestampHeader: string): string {
  // Milliseconds read as seconds lie ages ahead; divided by 1000 they land near the clock.
  const stamp = Number(timestampHeader);
  if (behind < 0 && Math.abs(behind + stamp - stamp / 1000) <= TOLERANCE_SECONDS) {
    return 'webhook-timestamp is in milliseconds: divided by 1000 it is within the tolerance. The spec wants Unix seconds.';
  }
  const where = behind > 0 ? `${behind} s behind` : `${-behind} s ahead of`;
  return (
    `the signature is valid, but the timestamp is ${where} this clock, past the ${TOLERANCE_SECONDS} s tolerance: ` +
    (behind > 0 ? 'the request is old (replayed, or held up on the way), or ' : '') +
    'a clock is off. Check the clocks (NTP); to check a request captured earlier, give its time with --now.'
  );
}

function timestampLine(diagnosis: Diagnosis): string | undefined {
  const { behindSeconds: behind, timestampHeader } = diagnosis;
  if (behind === undefined) return timestampHeader === undefined ? undefined : `timestamp: "${printable(timestampHeader)}" is not Unix seconds`;
  const offset = behind === 0 ? 'on this clock' : behind > 0 ? `${behind} s behind this clock` : `${-behind} s ahead of this clock`;
  return `timestamp: ${offset} (${Math.abs(behind) > TOLERANCE_SECONDS ? 'past' : 'within'} the ${TOLERANCE_SECONDS} s tolerance)`;
}

/** Why the request failed, the likeliest reason first. */
function cause(diagnosis: Diagnosis, error: WebhookVerificationError): string {
  const { missing, signature, failed } = diagnosis;
  if (failed !== undefined) return `not found: the search for it failed (${printable(failed)}) and was left off`;
  // The signature is judged only when no header is missing.
  if (signature === undefined) {
    return `the request has no ${missing.join(', ')} header${missing.length > 1 ? 's' : ''} (spec section 5): check that nothing on the way (a proxy, a framework) drops or renames headers.`;
  }
  if (signature.kind !== 'valid') return signatureCause(signature);
  if (error.code === 'timestamp_too_old' || error.code === 'timestamp_too_new') return clockCause(diagnosis.behindSeconds!, diagnosis.timestampHeader!);
  if (error.code === 'invalid_timestamp') return 'the signature is valid, but webhook-timestamp is not a plain integer of Unix seconds.';
  return `the signature is valid, but ${error.message}.`;
}

/** The lines `verify` prints. */
export function explain(diagnosis: Diagnosis): string[] {
  const { error, event } = diagnosis;
  const lines = error ? [`invalid: ${error.code}: ${error.message}`, `cause: ${cause(diagnosis, error)}`] : [`valid: ${printable(event!.type)} ${printable(event!.id)}`];
  if (diagnosis.skipped !== undefined) lines.push(skippedLine(diagnosis.skipped));
  const timestamp = timestampLine(diagnosis);
  return timestamp === undefined ? lines : [...lines, timestamp];
}
