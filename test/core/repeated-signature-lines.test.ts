/**
 * A `webhook-signature` sent as several header lines reaches the verifier
 * joined with ", " (Node's IncomingMessage and Fetch's Headers both do so):
 * each line's entries must still be read, in any order of the lines.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sign, verify } from '../../src/index.js';
import { codeOf } from '../helpers/error-code.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER_SECRET = 'whsec_c2Vjb25kLXNlY3JldC1mb3ItY29uZm9ybWFuY2U=';
const NOW = 1_795_000_000;
const clock = { now: () => NOW * 1000 };
const BODY = JSON.stringify({ id: 'evt_1', type: 'call.missed', data: { object: { id: 'call_1' } } });
const signed = (secret: string) => sign(BODY, { id: 'evt_1', timestamp: NOW, secret });
const { 'webhook-signature': VALID, ...REST } = signed(SECRET);
const OTHER = signed(OTHER_SECRET)['webhook-signature'];

/** Verifies with `lines` as Fetch joins them; answers the outcome. */
function verifyLines(lines: readonly string[]): string {
  const headers = new Headers(REST);
  for (const line of lines) headers.append('webhook-signature', line);
  return codeOf(() => verify(BODY, headers, SECRET, clock));
}

describe('webhook-signature sent as several header lines', () => {
  it.each([
    ['the valid line first', [VALID, OTHER]],
    ['the valid line last', [OTHER, VALID]],
  ])('verifies with %s', (_name, lines) => {
    expect(verifyLines(lines)).toBe('ok');
    // Node joins repeated lines of an unknown header the same way.
    expect(codeOf(() => verify(BODY, { ...REST, 'webhook-signature': lines.join(', ') }, SECRET, clock))).toBe('ok');
  });

  it('verifies whatever other lines and entries come before or after the valid one', () => {
    const entry = fc.oneof(fc.constant(OTHER), fc.constant('v2,c29tZXRoaW5n'), fc.stringMatching(/^v1,[A-Za-z0-9+/]{0,43}=?$/));
    const line = fc.array(entry, { minLength: 1, maxLength: 3 }).map((entries) => entries.join(' '));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 3 }), fc.array(line, { maxLength: 3 }), (before, after) => {
        expect(verifyLines([...before, VALID, ...after])).toBe('ok');
      }),
    );
  });

  it('still refuses when no line holds a valid signature', () => {
    expect(verifyLines([OTHER, OTHER])).toBe('invalid_signature');
    // The comma that ends a line is no part of the entry: a valid digest followed by a stray comma is no match.
    expect(verifyLines([`${VALID},`])).toBe('invalid_signature');
  });
});
