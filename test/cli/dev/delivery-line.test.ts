/**
 * The line `svc-webhooks dev` prints per delivery: what it says of each kind
 * of delivery, and that what a sender or a receiver wrote reaches the
 * terminal escaped and cut, on one line of bounded length.
 */
import { describe, expect, it } from 'vitest';
import { deliveryLine } from '../../../src/cli/dev/delivery-line.js';
import type { DeliveryRecord } from '../../../src/cli/dev/delivery-log.js';

const RECEIVED_AT = '2026-11-20T14:03:11.250Z';
/** The local time of RECEIVED_AT, as the terminal's clock reads it. */
const TIME = new Date(RECEIVED_AT).toTimeString().slice(0, 8);

function record(fields: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    n: 7,
    receivedAt: RECEIVED_AT,
    source: 'sender',
    event: { id: 'msg_01JD2W5E3G8Q7ZC1XK9M4T6V0A', type: 'call.missed' },
    request: { headers: {}, bodyBase64: '' },
    verdict: { valid: true, lines: [] },
    answer: { latencyMs: 12, status: 204, outcome: { outcome: 'processed', handlerMs: 3 } },
    ...fields,
  };
}

/** Escape sequences, CR LF forging a line of the relay's, a bidirectional override, and length. */
const HOSTILE = `\u001b[2J\r\n#8 forged\u202e${'x'.repeat(10_000)}`;

describe('svc-webhooks dev: the line per delivery', () => {
  it('says the time, number, type, id, verdict, status, outcome and milliseconds', () => {
    expect(deliveryLine(record())).toBe(`${TIME}  #7  call.missed       msg_01JD2W5E3G8Q7ZC1XK9M4T6V0A  relay: valid  receiver: 204 processed  12 ms`);
  });

  it("says a refusal's code, a status without an outcome, a receiver that gave no answer, and a body that is no envelope", () => {
    const refused = record({ verdict: { valid: false, code: 'invalid_signature', lines: [] }, answer: { latencyMs: 3, status: 400 } });
    expect(deliveryLine(refused)).toBe(`${TIME}  #7  call.missed       msg_01JD2W5E3G8Q7ZC1XK9M4T6V0A  relay: invalid_signature  receiver: 400  3 ms`);
    const { event: _, ...unsigned } = record({ verdict: { valid: false, code: 'missing_headers', lines: [] }, answer: { latencyMs: 1, failure: 'connection failed (ECONNREFUSED)' } });
    expect(deliveryLine(unsigned)).toBe(`${TIME}  #7  (no envelope)     -  relay: missing_headers  receiver: connection failed (ECONNREFUSED)  1 ms`);
  });

  it.each([
    ['an invalid verdict without a code', { verdict: { valid: false, lines: [] } }, 'relay: invalid  receiver: 204 processed'],
    ['no status and no reason', { answer: { latencyMs: 12 } }, 'relay: valid  receiver: no answer'],
  ] as const)('says what it can of %s', (_name, fields, said) => {
    expect(deliveryLine(record(fields))).toBe(`${TIME}  #7  call.missed       msg_01JD2W5E3G8Q7ZC1XK9M4T6V0A  ${said}  12 ms`);
  });

  it('says which delivery a replay is of and in which mode, and a send from the page', () => {
    expect(deliveryLine(record({ source: 'replay', replayOf: 2, mode: 'new-id' }))).toMatch(/^\d\d:\d\d:\d\d {2}#7 \(replay of #2, new-id\) {2}call\.missed /);
    expect(deliveryLine(record({ source: 'send' }))).toMatch(/^\d\d:\d\d:\d\d {2}#7 \(sent from the page\) {2}call\.missed /);
  });

  it("escapes and cuts what a sender or a receiver wrote: one line, of bounded length, whatever they sent", () => {
    const line = deliveryLine(
      record({
        event: { id: HOSTILE, type: HOSTILE },
        verdict: { valid: false, code: HOSTILE, lines: [] },
        answer: { latencyMs: 5, status: 400, outcome: { outcome: HOSTILE } },
      }),
    );
    const escaped = String.raw`\x1b[2J\r\n#8 forged\u202e`;
    const shown = `${escaped}${'x'.repeat(64 - escaped.length)}…`;
    expect(line).toBe(`${TIME}  #7  ${shown}  ${shown}  relay: ${shown}  receiver: 400 ${shown}  5 ms`);
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
    const failed = deliveryLine(record({ answer: { latencyMs: 5, failure: HOSTILE } }));
    expect(failed).toContain(`receiver: ${shown}  5 ms`);
  });
});
