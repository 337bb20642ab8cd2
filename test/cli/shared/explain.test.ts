import { describe, expect, it } from 'vitest';
import { WebhookVerificationError, type VerificationErrorCode } from '../../../src/core/errors.js';
import type { Diagnosis, SignatureFinding } from '../../../src/cli/shared/diagnose.js';
import { explain } from '../../../src/cli/shared/explain.js';

const NOW = 1_795_000_000;
const ON_TIME = { timestampHeader: String(NOW), behindSeconds: 0 } as const;
const TIMESTAMP_LINE = 'timestamp: on this clock (within the 300 s tolerance)';

function refused(code: VerificationErrorCode, message: string, found: Omit<Diagnosis, 'error' | 'missing'> & { missing?: string[] }): Diagnosis {
  return { missing: [], ...found, error: new WebhookVerificationError(code, message) };
}

/** The cause line printed for a refused signature. */
function signatureCauseOf(signature: SignatureFinding): string {
  const lines = explain(refused('invalid_signature', 'no match', { ...ON_TIME, signature }));
  expect(lines[0]).toBe('invalid: invalid_signature: no match');
  expect(lines[2]).toBe(TIMESTAMP_LINE);
  return lines[1]!;
}

const PREFIX_KEPT =
  'the signature was made with the whole secret, "whsec_" prefix included, used as UTF-8 text. The key is the ' +
  'base64-decoded part after "whsec_" (spec section 5, rule 3): the signer used the secret string as it is, and a ' +
  'receiver doing the same refuses every real delivery.';
const COMPACT_JSON =
  'the signature matches the body parsed and printed again as compact JSON, not the bytes given: the JSON was ' +
  're-serialized on one side. Either the body given here (or the one the receiver verifies) went through a JSON ' +
  'parser and back, or the sender signed a re-serialization rather than the bytes it sent. Verify the raw request ' +
  'body, before any JSON body parser.';

describe('explain', () => {
  it('names the event of a valid request, and where its timestamp lies', () => {
    const valid: Diagnosis = { missing: [], event: { id: 'msg_1', type: 'call.missed' }, signature: { kind: 'valid' }, ...ON_TIME };
    expect(explain(valid)).toEqual(['valid: call.missed msg_1', TIMESTAMP_LINE]);
  });

  it.each([
    [1, '1 s behind this clock (within'],
    [300, '300 s behind this clock (within'],
    [301, '301 s behind this clock (past'],
    [-1, '1 s ahead of this clock (within'],
    [-300, '300 s ahead of this clock (within'],
    [-301, '301 s ahead of this clock (past'],
  ])('places a timestamp %i s behind the clock against the tolerance', (behindSeconds, where) => {
    const valid: Diagnosis = { missing: [], event: { id: 'msg_1', type: 'call.missed' }, timestampHeader: '1', behindSeconds };
    expect(explain(valid)[1]).toBe(`timestamp: ${where} the 300 s tolerance)`);
  });

  it.each([
    ['prefix kept', { mistake: 'prefix_kept' }, PREFIX_KEPT],
    [
      'not base64-decoded',
      { mistake: 'not_base64_decoded' },
      'the signature was made with the part after "whsec_" used as UTF-8 text, not base64-decoded. The key is that part ' +
        'base64-decoded (spec section 5, rule 3).',
    ],
    [
      'a legacy secret base64-decoded',
      { mistake: 'base64_decoded' },
      'the signature was made with this secret base64-decoded. A secret without the "whsec_" prefix is a legacy secret, ' +
        'used as its UTF-8 bytes (spec section 5, rule 3): either this is a whsec_ secret given without its prefix ' +
        '(give it as whsec_…), or the signer base64-decoded a legacy secret.',
    ],
    [
      'a final newline',
      { change: 'final_newline_removed' },
      'the signature matches the body without its final newline: the bytes given end with one that was not signed (an ' +
        'editor or a shell echo adds it). Give the body exactly as received.',
    ],
    ['compact JSON', { change: 'compact_json' }, COMPACT_JSON],
    ['JSON indented by 2', { change: 'pretty_json_2' }, COMPACT_JSON.replace('compact JSON', 'JSON indented with 2 spaces')],
    ['JSON indented by 4', { change: 'pretty_json_4' }, COMPACT_JSON.replace('compact JSON', 'JSON indented with 4 spaces')],
    ['both a key mistake and a body change', { mistake: 'prefix_kept', change: 'compact_json' }, `${PREFIX_KEPT} Also, ${COMPACT_JSON}`],
  ] as const)('explains a signature that matches with %s', (_name, variant, text) => {
    expect(signatureCauseOf({ kind: 'variant', ...variant })).toBe(`cause: ${text}`);
  });

  it('says when webhook-signature holds no v1 entry, and when no variant matches', () => {
    expect(signatureCauseOf({ kind: 'no_v1_entry' })).toBe(
      'cause: webhook-signature holds no well-formed "v1,<base64>" entry (an HMAC-SHA256 is 44 base64 characters): the ' +
        'sender does not sign the Standard Webhooks way, or something on the way rewrote the header.',
    );
    expect(signatureCauseOf({ kind: 'other_secret' })).toBe(
      "cause: the request was signed with a different secret, most likely another endpoint's (each endpoint has its own). " +
        'No variant matches: not the secret given, nor its usual mistaken forms (prefix kept, not base64-decoded, ' +
        'base64-decoded), nor the body re-serialized as JSON or without a final newline. Check which endpoint this URL ' +
        'belongs to; during a rotation, give both secrets with --secret twice.',
    );
  });

  it('names the missing headers, one or several, before anything else', () => {
    const one = refused('missing_header', 'the webhook-signature header is missing or empty', { ...ON_TIME, missing: ['webhook-signature'] });
    expect(explain(one)).toEqual([
      'invalid: missing_header: the webhook-signature header is missing or empty',
      'cause: the request has no webhook-signature header (spec section 5): check that nothing on the way (a proxy, a ' +
        'framework) drops or renames headers.',
      TIMESTAMP_LINE,
    ]);
    const two = refused('missing_header', 'missing', { missing: ['webhook-id', 'webhook-timestamp'] });
    expect(explain(two)).toEqual([
      'invalid: missing_header: missing',
      'cause: the request has no webhook-id, webhook-timestamp headers (spec section 5): check that nothing on the way (a ' +
        'proxy, a framework) drops or renames headers.',
    ]);
  });

  it('blames the clock for a valid signature on an old timestamp, or the request being old', () => {
    const old = refused('timestamp_too_old', 'too old', { signature: { kind: 'valid' }, timestampHeader: String(NOW - 412), behindSeconds: 412 });
    expect(explain(old)).toEqual([
      'invalid: timestamp_too_old: too old',
      'cause: the signature is valid, but the timestamp is 412 s behind this clock, past the 300 s tolerance: the request ' +
        'is old (replayed, or held up on the way), or a clock is off. Check the clocks (NTP); to check a request captured ' +
        'earlier, give its time with --now.',
      'timestamp: 412 s behind this clock (past the 300 s tolerance)',
    ]);
  });

  it('blames a clock alone for a timestamp ahead of it', () => {
    const ahead = refused('timestamp_too_new', 'too new', { signature: { kind: 'valid' }, timestampHeader: String(NOW + 412), behindSeconds: -412 });
    expect(explain(ahead)[1]).toBe(
      'cause: the signature is valid, but the timestamp is 412 s ahead of this clock, past the 300 s tolerance: a clock is ' +
        'off. Check the clocks (NTP); to check a request captured earlier, give its time with --now.',
    );
  });

  const MILLISECONDS = 'cause: webhook-timestamp is in milliseconds: divided by 1000 it is within the tolerance. The spec wants Unix seconds.';

  it.each([
    ['300 s behind', NOW - 300, true],
    ['300 s ahead', NOW + 300, true],
    ['301 s behind', NOW - 301, false],
    ['301 s ahead', NOW + 301, false],
  ])('takes a timestamp that in milliseconds is %s the clock for milliseconds (%i s): %s', (_name, seconds, milliseconds) => {
    const stamp = seconds * 1000;
    const diagnosis = refused('timestamp_too_new', 'too new', { signature: { kind: 'valid' }, timestampHeader: String(stamp), behindSeconds: NOW - stamp });
    expect(explain(diagnosis)[1]).toEqual(milliseconds ? MILLISECONDS : expect.stringMatching(/^cause: the signature is valid, but the timestamp is \d+ s ahead of this clock/));
  });

  it('says a timestamp that is not a number is not Unix seconds', () => {
    const diagnosis = refused('invalid_timestamp', 'not an integer', { signature: { kind: 'valid' }, timestampHeader: '17950000O0' });
    expect(explain(diagnosis)).toEqual([
      'invalid: invalid_timestamp: not an integer',
      'cause: the signature is valid, but webhook-timestamp is not a plain integer of Unix seconds.',
      'timestamp: "17950000O0" is not Unix seconds',
    ]);
  });

  it("passes on the core's reason when the signature is valid and the clock fine", () => {
    const diagnosis = refused('invalid_payload', 'the body is not JSON', { signature: { kind: 'valid' }, ...ON_TIME });
    expect(explain(diagnosis)).toEqual(['invalid: invalid_payload: the body is not JSON', 'cause: the signature is valid, but the body is not JSON.', TIMESTAMP_LINE]);
  });
});

describe('explain: what the diagnosis left out', () => {
  const otherSecret = { ...ON_TIME, signature: { kind: 'other_secret' } } as const;

  it('says which changed bodies it did not try, and why', () => {
    const deep = explain(refused('invalid_signature', 'no match', { ...otherSecret, skipped: { changes: ['compact_json', 'pretty_json_2', 'pretty_json_4'], reason: 'depth' } }));
    expect([deep.length, deep[2], deep[3]]).toEqual([
      4,
      'not tried: the body printed again as compact JSON, JSON indented with 2 spaces or JSON indented with 4 spaces: it nests deeper than 64 levels',
      TIMESTAMP_LINE,
    ]);
    const large = explain(refused('invalid_signature', 'no match', { ...otherSecret, skipped: { changes: ['pretty_json_4'], reason: 'bytes' } }));
    expect(large[2]).toBe("not tried: the body printed again as JSON indented with 4 spaces: the bodies tried may hold 4 times the body's bytes together (1 MiB for a body smaller than 256 KiB)");
  });

  it('gives the verdict alone when the search for a cause failed, and says so', () => {
    expect(explain(refused('invalid_signature', 'no match', { ...ON_TIME, failed: 'RangeError' }))).toEqual([
      'invalid: invalid_signature: no match',
      'cause: not found: the search for it failed (RangeError) and was left off',
      TIMESTAMP_LINE,
    ]);
  });
});
