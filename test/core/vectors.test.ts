import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sign, verify, verifyAsync, verifyDelivery, Webhook, WebhookVerificationError, type WebhookDelivery } from '../../src/index.js';
import { resolveVerifyOptions } from '../../src/core/options.js';
import { decodeSecrets } from '../../src/core/secret.js';
import { matchSignedRequestAsync, readSignedRequest } from '../../src/core/verify-delivery.js';
import { renderVectors, VECTORS_FILE, type Vector } from '../../fixtures/vectors.js';

const committed = readFileSync(VECTORS_FILE, 'utf8');
const vectors = JSON.parse(committed) as Vector[];
// Vectors whose headers sign() could have produced: all three present, whole seconds.
const signable = vectors.filter(
  (v) => v.headers['webhook-id'] && v.headers['webhook-signature'] !== undefined && /^\d+$/.test(v.headers['webhook-timestamp'] ?? ''),
);

function outcome(run: () => { type: string }): Vector['expected'] {
  try {
    return { type: run().type };
  } catch (error) {
    return refusal(error);
  }
}

async function settled(run: () => Promise<{ type: string }>): Promise<Vector['expected']> {
  try {
    return { type: (await run()).type };
  } catch (error) {
    return refusal(error);
  }
}

/** A delivery, or the refusal's code: of a call or of a promise. */
function settledDelivery(run: () => WebhookDelivery): WebhookDelivery | Vector['expected'];
function settledDelivery(run: () => Promise<WebhookDelivery>): Promise<WebhookDelivery | Vector['expected']>;
function settledDelivery(run: () => WebhookDelivery | Promise<WebhookDelivery>): unknown {
  try {
    const delivery = run();
    return delivery instanceof Promise ? delivery.catch(refusal) : delivery;
  } catch (error) {
    return refusal(error);
  }
}

function refusal(error: unknown): Vector['expected'] {
  if (error instanceof WebhookVerificationError) return { error: error.code };
  throw error;
}

describe('known-answer vectors', () => {
  it('vectors.json is what fixtures/vectors.ts produces (npm run fixtures)', () => {
    expect(committed).toBe(renderVectors());
  });

  it('covers every verify() error code', () => {
    const codes = new Set(vectors.map((v) => ('error' in v.expected ? v.expected.error : 'ok')));
    for (const code of ['ok', 'missing_header', 'invalid_timestamp', 'timestamp_too_old', 'timestamp_too_new', 'invalid_signature', 'invalid_payload']) {
      expect(codes).toContain(code);
    }
  });

  describe.each(vectors.map((v) => [v.name, v] as const))('%s', (_name, vector) => {
    const payload = Buffer.from(vector.payloadBase64, 'base64');
    const options = { now: () => vector.nowMs };

    it('verify() on bytes', () => {
      expect(outcome(() => verify(payload, vector.headers, vector.secret, options))).toEqual(vector.expected);
    });

    it('Webhook#verify on an ArrayBuffer with headers in another case', () => {
      const copy = payload.buffer.slice(payload.byteOffset, payload.byteOffset + payload.byteLength);
      const shouted = Object.fromEntries(Object.entries(vector.headers).map(([name, value]) => [name.toUpperCase(), value]));
      const webhook = new Webhook(vector.secret, options);
      expect(outcome(() => webhook.verify(copy, shouted))).toEqual(vector.expected);
    });

    it('verifyAsync() on bytes', async () => {
      expect(await settled(() => verifyAsync(payload, vector.headers, vector.secret, options))).toEqual(vector.expected);
    });

    it('the Web Crypto path, on bytes and on their text: what verifyDelivery() gives, dedup key included', async () => {
      const keys = decodeSecrets(vector.secret);
      for (const body of [new Uint8Array(payload), payload.toString('utf8')]) {
        const viaSubtle = async () => matchSignedRequestAsync(readSignedRequest(body, vector.headers, resolveVerifyOptions(options)), keys);
        const viaNode = () => verifyDelivery(body, vector.headers, vector.secret, options);
        expect(await settledDelivery(viaSubtle)).toEqual(settledDelivery(viaNode));
      }
    });
  });

  it.each(signable.map((v) => [v.name, v] as const))('sign() reproduces the v1 signatures of %s', (_name, vector) => {
    const payload = Buffer.from(vector.payloadBase64, 'base64');
    const secrets = typeof vector.secret === 'string' ? [vector.secret] : vector.secret;
    const { 'webhook-id': id = '', 'webhook-timestamp': timestamp, 'webhook-signature': header = '' } = vector.headers;
    const produced = secrets.map((secret) => sign(payload, { id, timestamp: Number(timestamp), secret })['webhook-signature']);
    const entries = header.split(' ');
    // A receiver's secret signs one of the entries unless the vector is about a signature that does not match.
    const refused = 'error' in vector.expected && ['invalid_signature', 'missing_header'].includes(vector.expected.error);
    expect(produced.some((entry) => entries.includes(entry))).toBe(!refused);
  });
});
