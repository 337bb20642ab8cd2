/**
 * The behaviour every adapter must show, run once per adapter and transport:
 * each adapter's test file supplies a `BuildHarness` that mounts a webhook
 * route on a real app and sends it requests over HTTP (or the framework's
 * own request injection).
 */
import { expect, it } from 'vitest';
import { KNOWN_EVENT_TYPES, type ReceiverOptions, type SingleEndpoint, type WebhookErrorCode, type WebhookEvent } from '../../src/index.js';
import { keyOf, NOW_SECONDS, OLD_SECRET, SECRET, now, signedRequest, type SignedRequest } from './signed-request.js';
import { recordingLogger } from './recording-logger.js';
import { TestDedupStore } from './test-dedup-store.js';

/** The webhook route's handler, as each adapter test mounts it. */
export class RouteSpy {
  /** Each call, with `stale` where the delivery was marked stale (`ordering` with `staleEvents: 'run'`). */
  readonly calls: Array<{ readonly event: WebhookEvent; readonly id: string; readonly stale?: true }> = [];
  /** When true, the handler throws after recording the call. */
  failing = false;
  /** When set, the handler waits for it after recording the call. */
  hold: Promise<void> | undefined;

  /** Records the call; answers the status the route sends. */
  async handle(event: WebhookEvent, id: string, stale?: boolean): Promise<number> {
    this.calls.push(stale === true ? { event, id, stale } : { event, id });
    await this.hold;
    if (this.failing) throw new Error('the handler failed');
    return 204;
  }
}

/** What a refused request gets when the test asks for custom error responses. */
export const CUSTOM_ERROR_STATUS = 418;
export const customErrorBody = (code: WebhookErrorCode): unknown => ({ custom: code });

export interface HarnessSpec {
  readonly options: ReceiverOptions & SingleEndpoint;
  readonly route: RouteSpy;
  /** Pass an `onError` answering CUSTOM_ERROR_STATUS with `customErrorBody(error.code)`. */
  readonly customErrors?: boolean;
}

export interface AdapterHarness {
  /** POSTs to the webhook route; `signal` aborts it where the transport is a real connection. */
  post(request: SignedRequest, signal?: AbortSignal): Promise<Response>;
  close(): Promise<void>;
}

export type BuildHarness = (spec: HarnessSpec) => Promise<AdapterHarness>;

const baseOptions = { secret: SECRET, now } as const;

async function withHarness(
  build: BuildHarness,
  spec: Partial<HarnessSpec>,
  run: (harness: AdapterHarness, route: RouteSpy) => Promise<void>,
): Promise<void> {
  const route = spec.route ?? new RouteSpy();
  const harness = await build({ options: baseOptions, ...spec, route });
  try {
    await run(harness, route);
  } finally {
    await harness.close();
  }
}

async function expectRefusal(response: Response, status: number, code: WebhookErrorCode): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message).toEqual(expect.any(String));
}

const refusals: ReadonlyArray<{ name: string; code: WebhookErrorCode; status: number; request: () => SignedRequest }> = [
  ...(['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const).map((header) => ({
    name: `no ${header} header`,
    code: 'missing_header' as const,
    status: 400,
    request: () => {
      const { body, headers } = signedRequest();
      const { [header]: _dropped, ...rest } = headers;
      return { body, headers: rest };
    },
  })),
  {
    name: 'a timestamp that is not a number',
    code: 'invalid_timestamp',
    status: 400,
    request: () => {
      const request = signedRequest();
      return { body: request.body, headers: { ...request.headers, 'webhook-timestamp': 'soon' } };
    },
  },
  { name: 'an expired timestamp', code: 'timestamp_too_old', status: 400, request: () => signedRequest({ timestamp: NOW_SECONDS - 301 }) },
  { name: 'a future timestamp', code: 'timestamp_too_new', status: 400, request: () => signedRequest({ timestamp: NOW_SECONDS + 301 }) },
  { name: 'another secret', code: 'invalid_signature', status: 400, request: () => signedRequest({ secret: OLD_SECRET }) },
  {
    name: 'tampered bytes',
    code: 'invalid_signature',
    status: 400,
    request: () => {
      const request = signedRequest();
      return { ...request, body: request.body.replace('obj_evt_1', 'obj_evt_2') };
    },
  },
  { name: 'a signed body that is not JSON', code: 'invalid_payload', status: 400, request: () => signedRequest({ body: 'not json' }) },
  {
    name: 'a body over maxPayloadBytes',
    code: 'payload_too_large',
    status: 413,
    request: () => signedRequest({ body: JSON.stringify({ id: 'evt_1', pad: 'x'.repeat(5000) }) }),
  },
];

/** Declares the shared tests for one adapter and transport. */
export function adapterContract(build: BuildHarness): void {
  it.each(KNOWN_EVENT_TYPES)('hands a verified %s event and its webhook-id to the route', async (type) => {
    await withHarness(build, {}, async (harness, route) => {
      const response = await harness.post(signedRequest({ id: 'evt_typed', type }));
      expect(response.status).toBe(204);
      expect(route.calls).toEqual([{ id: 'evt_typed', event: expect.objectContaining({ id: 'evt_typed', type }) }]);
    });
  });

  it('accepts a request signed with the new secret while both secrets are configured', async () => {
    await withHarness(build, { options: { ...baseOptions, secret: [OLD_SECRET, SECRET] } }, async (harness, route) => {
      expect((await harness.post(signedRequest())).status).toBe(204);
      expect(route.calls).toHaveLength(1);
    });
  });

  it.each(refusals)('refuses $name with $status $code and does not call the route', async ({ code, status, request }) => {
    await withHarness(build, { options: { ...baseOptions, maxPayloadBytes: 4096 } }, async (harness, route) => {
      await expectRefusal(await harness.post(request()), status, code);
      expect(route.calls).toEqual([]);
    });
  });

  it("logs its refusals to logger, a line per code a minute by its clock, each naming the request's webhook-id; a duplicate is no refusal", async () => {
    const { logger, lines } = recordingLogger();
    let at = now();
    await withHarness(build, { options: { ...baseOptions, now: () => at, logger } }, async (harness) => {
      for (const id of ['evt_a', 'evt_b', 'evt_c']) expect((await harness.post(signedRequest({ id, secret: OLD_SECRET }))).status).toBe(400);
      const { 'webhook-id': _id, ...unnamed } = signedRequest().headers;
      expect((await harness.post({ body: signedRequest().body, headers: unnamed })).status).toBe(400);
      expect((await harness.post(signedRequest())).status).toBe(204);
      expect((await harness.post(signedRequest())).status).toBe(200);
      at += 59_999;
      expect((await harness.post(signedRequest({ id: 'evt_d', secret: OLD_SECRET }))).status).toBe(400);
      at += 1;
      expect((await harness.post(signedRequest({ id: 'evt_e', secret: OLD_SECRET }))).status).toBe(400);
    });
    const forged = { errorClass: 'WebhookVerificationError', errorMessage: 'no v1 signature in webhook-signature matches the secret' };
    expect(lines).toStrictEqual([
      ['warn', { code: 'invalid_signature', id: 'evt_a', ...forged }, `the request with webhook-id "evt_a" was refused 400 invalid_signature (${forged.errorMessage})`],
      [
        'warn',
        { code: 'missing_header', errorClass: 'WebhookVerificationError', errorMessage: 'the webhook-id header is missing or empty' },
        'a request without a webhook-id was refused 400 missing_header (the webhook-id header is missing or empty)',
      ],
      [
        'warn',
        { code: 'invalid_signature', id: 'evt_e', ...forged, unlogged: 3 },
        `the request with webhook-id "evt_e" was refused 400 invalid_signature (${forged.errorMessage}); 3 more refused invalid_signature since the last line`,
      ],
    ]);
  });

  it('lets onError answer refused requests instead', async () => {
    await withHarness(build, { customErrors: true }, async (harness, route) => {
      const response = await harness.post(signedRequest({ secret: OLD_SECRET }));
      expect(response.status).toBe(CUSTOM_ERROR_STATUS);
      expect(await response.json()).toEqual(customErrorBody('invalid_signature'));
      expect(route.calls).toEqual([]);
    });
  });

  it('completes the dedup claim after a 2xx and answers a duplicate 200 without calling the route', async () => {
    const dedup = new TestDedupStore();
    await withHarness(build, { options: { ...baseOptions, dedup: { store: dedup } } }, async (harness, route) => {
      const settled = dedup.nextSettlement();
      expect((await harness.post(signedRequest())).status).toBe(204);
      expect(await settled).toEqual({ op: 'complete', id: keyOf('evt_1') });
      expect(dedup.stateOf(keyOf('evt_1'))).toBe('done');

      const duplicate = await harness.post(signedRequest());
      expect(duplicate.status).toBe(200);
      expect(await duplicate.json()).toEqual({ received: true, duplicate: true });
      expect(route.calls).toHaveLength(1);
    });
  });

  it('releases the dedup claim when the route fails, so the retry runs the route again', async () => {
    const dedup = new TestDedupStore();
    await withHarness(build, { options: { ...baseOptions, dedup: { store: dedup } } }, async (harness, route) => {
      route.failing = true;
      const released = dedup.nextSettlement();
      expect((await harness.post(signedRequest())).status).toBe(500);
      expect(await released).toEqual({ op: 'release', id: keyOf('evt_1') });
      expect(dedup.stateOf(keyOf('evt_1'))).toBe('absent');

      route.failing = false;
      expect((await harness.post(signedRequest())).status).toBe(204);
      expect(route.calls).toHaveLength(2);
    });
  });

  it('answers 409 with Retry-After while another delivery of the event holds the claim', async () => {
    const dedup = new TestDedupStore();
    await dedup.begin(keyOf('evt_1'));
    await withHarness(build, { options: { ...baseOptions, dedup: { store: dedup, leaseMs: 30_000 } } }, async (harness, route) => {
      const response = await harness.post(signedRequest());
      expect(response.headers.get('retry-after')).toBe('30');
      await expectRefusal(response, 409, 'delivery_in_progress');
      expect(route.calls).toEqual([]);
    });
  });

  it('answers 503 without calling the route when the dedup store fails', async () => {
    const dedup = new TestDedupStore();
    dedup.failing = true;
    await withHarness(build, { options: { ...baseOptions, dedup: { store: dedup } } }, async (harness, route) => {
      await expectRefusal(await harness.post(signedRequest()), 503, 'dedup_unavailable');
      expect(route.calls).toEqual([]);
    });
  });
}

/**
 * What a real connection adds: the sender hanging up while the route runs
 * (the service gives up after 10 s) must neither release the claim early,
 * which would let its retry run the route a second time, nor lose the
 * route's outcome.
 */
export function disconnectContract(build: BuildHarness): void {
  it('keeps the claim while the route outlives a sender that hung up, then settles with its outcome', async () => {
    const dedup = new TestDedupStore();
    await withHarness(build, { options: { ...baseOptions, dedup: { store: dedup } } }, async (harness, route) => {
      let finishRoute!: () => void;
      route.hold = new Promise((resolve) => (finishRoute = resolve));
      const hangUp = new AbortController();
      const first = harness.post(signedRequest(), hangUp.signal).catch((error: unknown) => error);
      await expect.poll(() => route.calls.length).toBe(1);
      hangUp.abort();
      expect(await first).toMatchObject({ name: 'AbortError' });
      // Give the server time to see the connection close.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(dedup.stateOf(keyOf('evt_1'))).toBe('leased');
      expect((await harness.post(signedRequest())).status).toBe(409);

      const settled = dedup.nextSettlement();
      finishRoute();
      expect(await settled).toEqual({ op: 'complete', id: keyOf('evt_1') });
      expect((await harness.post(signedRequest())).status).toBe(200);
      expect(route.calls).toHaveLength(1);
    });
  });
}
