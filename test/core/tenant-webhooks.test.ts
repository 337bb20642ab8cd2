import fc from 'fast-check';
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { isTenantName } from '../../src/core/tenant-webhooks.js';
import { TenantWebhooks, WebhookError, WebhookVerificationError, type SecretResolver } from '../../src/index.js';
import { NOW_SECONDS, now, signedRequest } from '../helpers/signed-request.js';

const secretOf = (tenant: string): string => `whsec_${Buffer.from(`secret-of-${tenant}`).toString('base64')}`;

/** A resolver knowing `tenants`, counting its calls. */
function resolverOf(tenants: readonly string[]) {
  const known = new Set(tenants);
  const calls: string[] = [];
  const resolve: SecretResolver = async (tenant) => {
    calls.push(tenant);
    return known.has(tenant) ? secretOf(tenant) : undefined;
  };
  return { resolve, calls };
}

async function codeOf(verifying: Promise<unknown>): Promise<string> {
  const error = await verifying.then(
    () => 'verified',
    (thrown: unknown) => thrown,
  );
  return error instanceof WebhookError ? error.code : String(error);
}

describe('isTenantName', () => {
  it(`takes a non-empty string of at most 256 code units, well-formed UTF-16`, () => {
    for (const name of ['a', 'acme', 'x'.repeat(256), 'caf\u00e9', '\ud83d\ude00']) expect([name.length, isTenantName(name)]).toEqual([name.length, true]);
  });

  it('refuses the empty string, one code unit too many, a lone surrogate of either half, and what is no string', () => {
    for (const name of ['', 'x'.repeat(257), '\ud800', 'a\udc00', '\ude00\ud83d', undefined, null, 7, ['acme']]) {
      expect([name, isTenantName(name)]).toEqual([name, false]);
    }
  });
});

describe('TenantWebhooks', () => {
  it("verifies a request with its tenant's secret and names the tenant", async () => {
    const { resolve } = resolverOf(['acme', 'globex']);
    const webhooks = new TenantWebhooks(resolve, { now });
    const { body, headers } = signedRequest({ id: 'evt_7', secret: secretOf('acme') });
    const delivery = await webhooks.verifyDelivery('acme', body, headers);
    expect(delivery).toMatchObject({ id: 'evt_7', tenant: 'acme', keyId: '0', timestamp: NOW_SECONDS });
    expect((await webhooks.verify('acme', body, headers)).id).toBe('evt_7');
    // Another tenant's secret does not verify it.
    expect(await codeOf(webhooks.verify('globex', body, headers))).toBe('invalid_signature');
  });

  it('answers unknown_tenant (404) for a tenant without a secret, and for an empty one without a lookup', async () => {
    const { resolve, calls } = resolverOf(['acme']);
    const webhooks = new TenantWebhooks(resolve, { now });
    const { body, headers } = signedRequest({ secret: secretOf('nobody') });
    const error = await webhooks.verify('nobody', body, headers).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'unknown_tenant', status: 404, message: 'no endpoint is known for this tenant' });
    expect(await codeOf(webhooks.verify('', body, headers))).toBe('unknown_tenant');
    expect(calls).toEqual(['nobody']);
  });

  it('keeps a looked-up secret for secretCacheMs on its own clock', async () => {
    const { resolve, calls } = resolverOf(['acme']);
    let at = now();
    const webhooks = new TenantWebhooks(resolve, { now: () => at, secretCacheMs: 1000 });
    const { body, headers } = signedRequest({ secret: secretOf('acme') });
    await webhooks.verify('acme', body, headers);
    at += 999;
    await webhooks.verify('acme', body, headers);
    expect(calls).toEqual(['acme']);
    at += 1;
    await webhooks.verify('acme', body, headers);
    expect(calls).toEqual(['acme', 'acme']);
  });

  it("verifies either secret of a tenant's rotation, naming the keyed one", async () => {
    const webhooks = new TenantWebhooks(() => [{ id: 'next', secret: secretOf('next') }, secretOf('current')], { now });
    const signedNext = signedRequest({ secret: secretOf('next') });
    const signedCurrent = signedRequest({ secret: secretOf('current') });
    expect((await webhooks.verifyDelivery('acme', signedNext.body, signedNext.headers)).keyId).toBe('next');
    expect((await webhooks.verifyDelivery('acme', signedCurrent.body, signedCurrent.headers)).keyId).toBe('1');
  });

  it('answers secret_unavailable (503) when the lookup fails, with its error as the cause', async () => {
    const down = new Error('connection refused');
    const webhooks = new TenantWebhooks(() => Promise.reject(down), { now });
    const { body, headers } = signedRequest({ secret: secretOf('acme') });
    const error = await webhooks.verify('acme', body, headers).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'secret_unavailable', status: 503, cause: down });
  });

  describe('looks nothing up for a request that fails a check needing no secret', () => {
    const refusals: [string, () => { body: string; headers: Record<string, string> }, string][] = [
      ['a stale timestamp', () => signedRequest({ timestamp: NOW_SECONDS - 301 }), 'timestamp_too_old'],
      ['a future timestamp', () => signedRequest({ timestamp: NOW_SECONDS + 301 }), 'timestamp_too_new'],
      ['no webhook-id', () => without(signedRequest(), 'webhook-id'), 'missing_header'],
      ['no webhook-signature', () => without(signedRequest(), 'webhook-signature'), 'missing_header'],
      ['a malformed timestamp', () => withHeader(signedRequest(), 'webhook-timestamp', '17e8'), 'invalid_timestamp'],
      ['no v1 entry', () => withHeader(signedRequest(), 'webhook-signature', 'v2,abc'), 'invalid_signature'],
      ['a v1 entry of the wrong length', () => withHeader(signedRequest(), 'webhook-signature', 'v1,c2lnbmF0dXJl'), 'invalid_signature'],
      ['a body past the limit', () => signedRequest({ body: 'x'.repeat(2048) }), 'payload_too_large'],
    ];
    it.each(refusals)('%s', async (_, request, code) => {
      const { resolve, calls } = resolverOf(['acme']);
      const webhooks = new TenantWebhooks(resolve, { now, maxPayloadBytes: 1024 });
      const { body, headers } = request();
      expect(await codeOf(webhooks.verify('acme', body, headers))).toBe(code);
      expect(calls).toEqual([]);
    });

    it('for any timestamp out of tolerance and any signature header without a well-formed v1 entry (property)', async () => {
      const { resolve, calls } = resolverOf(['acme']);
      const webhooks = new TenantWebhooks(resolve, { now, toleranceMs: 300_000 });
      const outOfTolerance = fc.oneof(fc.integer({ min: 301, max: 10 ** 9 }), fc.integer({ min: -(10 ** 9), max: -301 }));
      const notAV1Entry = fc.string().filter((header) => !/(^| )v1,[A-Za-z0-9+/]{43}=/.test(header));
      await fc.assert(
        fc.asyncProperty(fc.oneof(outOfTolerance.map((skew) => ({ skew })), notAV1Entry.map((signature) => ({ signature }))), async (fault) => {
          let request = signedRequest({ secret: secretOf('acme'), timestamp: NOW_SECONDS - ('skew' in fault ? fault.skew : 0) });
          if ('signature' in fault) request = withHeader(request, 'webhook-signature', fault.signature);
          await webhooks.verify('acme', request.body, request.headers).then(
            () => {
              throw new Error('verified');
            },
            (error: unknown) => expect(error).toBeInstanceOf(WebhookVerificationError),
          );
        }),
      );
      expect(calls).toEqual([]);
    });
  });
});

function without({ body, headers }: { body: string; headers: Record<string, string> }, name: string) {
  const { [name]: _, ...rest } = headers;
  return { body, headers: rest };
}

function withHeader({ body, headers }: { body: string; headers: Record<string, string> }, name: string, value: string) {
  return { body, headers: { ...headers, [name]: value } };
}
