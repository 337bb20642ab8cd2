/**
 * A user's `onError` on every adapter (the Fetch and Lambda entries served
 * through their bridges), over a real socket: whatever it does
 * (throw, reject, never answer, answer too late, answer itself) the sender
 * gets an answer with its Retry-After, the process keeps serving, and a
 * failure is reported in one line.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook as expressWebhook, type ExpressWebhookOptions } from '../../adapters/express.js';
import { verifyWebhook as fastifyWebhook, type FastifyWebhookOptions } from '../../adapters/fastify.js';
import { verifyWebhook as fetchWebhook } from '../../adapters/fetch.js';
import { verifyWebhook as h3Webhook } from '../../adapters/h3.js';
import { verifyWebhook as honoWebhook } from '../../adapters/hono.js';
import { verifyWebhook as azureWebhook } from '../../adapters/azure.js';
import { verifyWebhook as lambdaWebhook, type LambdaWebhookResult } from '../../adapters/lambda.js';
import type { ReceiverOptions, SingleEndpoint, WebhookError } from '../../src/index.js';
import { CUSTOM_ERROR_STATUS, customErrorBody, RouteSpy } from '../helpers/adapter-contract.js';
import {
  azureRoute,
  fetchRoute,
  h3Route,
  lambdaRoute,
  serveAzure,
  serveExpress,
  serveFastify,
  serveFetch,
  serveH3,
  serveHono,
  serveLambda,
  type ServedApp,
} from '../helpers/adapter-servers.js';
import { EXPRESS_MAJORS, FASTIFY_MAJORS } from '../helpers/host-majors.js';
import { keyOf, SECRET, now, signedRequest } from '../helpers/signed-request.js';
import { TestDedupStore } from '../helpers/test-dedup-store.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

/** What the test's onError does. */
type Behaviour = 'answers' | 'throws' | 'rejects' | 'never answers' | 'answers too late';

const ON_ERROR_TIMEOUT_MS = 100;
const LATE_MS = 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const broken = (): never => {
  throw new Error('onError broke');
};

/** The onError of each behaviour for an adapter whose onError returns its answer (Hono, Fetch, Lambda). */
function returningOnErrors<A>(answer: (error: WebhookError) => A, late: () => void): Record<Behaviour, (error: WebhookError) => A | Promise<A>> {
  return {
    answers: answer,
    throws: broken,
    rejects: async () => broken(),
    'never answers': () => new Promise<A>(() => undefined),
    'answers too late': async (error) => {
      await sleep(LATE_MS);
      late();
      return answer(error);
    },
  };
}

interface Adapter {
  readonly name: string;
  /** Serves a receiver whose onError behaves as told; `late` settles once a too-late answer was tried. */
  serve(options: ReceiverOptions & SingleEndpoint, behaviour: Behaviour, late: () => void, route: RouteSpy): Promise<ServedApp>;
}

const expressAdapter = ([name, framework]: (typeof EXPRESS_MAJORS)[number]): Adapter => ({
  name,
  serve(options, behaviour, late, route) {
    const answer = (error: WebhookError, res: Parameters<NonNullable<ExpressWebhookOptions['onError']>>[2]) => {
      res.status(CUSTOM_ERROR_STATUS).json(customErrorBody(error.code));
    };
    const onErrors: Record<Behaviour, NonNullable<ExpressWebhookOptions['onError']>> = {
      answers: (error, _req, res) => answer(error, res),
      throws: broken,
      rejects: async () => broken(),
      'never answers': () => undefined,
      'answers too late': async (error, _req, res) => {
        await sleep(LATE_MS);
        try {
          answer(error, res);
        } finally {
          late();
        }
      },
    };
    return serveExpress({ ...options, onError: onErrors[behaviour], onErrorTimeoutMs: ON_ERROR_TIMEOUT_MS }, route, framework);
  },
});

const fastifyAdapter = ([name, framework]: (typeof FASTIFY_MAJORS)[number]): Adapter => ({
  name,
  serve(options, behaviour, late, route) {
    const onErrors: Record<Behaviour, NonNullable<FastifyWebhookOptions['onError']>> = {
      answers: async (error, _request, reply) => {
        await reply.code(CUSTOM_ERROR_STATUS).send(customErrorBody(error.code));
      },
      throws: broken,
      rejects: async () => broken(),
      // Returns without sending a reply.
      'never answers': async () => undefined,
      'answers too late': async (error, _request, reply) => {
        await sleep(LATE_MS);
        try {
          await reply.code(CUSTOM_ERROR_STATUS).send(customErrorBody(error.code));
        } finally {
          late();
        }
      },
    };
    return serveFastify({ ...options, onError: onErrors[behaviour], onErrorTimeoutMs: ON_ERROR_TIMEOUT_MS }, route, undefined, framework);
  },
});

const jsonResponse = (error: WebhookError): Response => Response.json(customErrorBody(error.code), { status: CUSTOM_ERROR_STATUS });

const adapters: readonly Adapter[] = [
  ...EXPRESS_MAJORS.map(expressAdapter),
  {
    name: 'hono',
    serve(options, behaviour, late, route) {
      const onErrors = returningOnErrors(jsonResponse, late);
      return serveHono({ ...options, onError: onErrors[behaviour], onErrorTimeoutMs: ON_ERROR_TIMEOUT_MS }, route);
    },
  },
  ...FASTIFY_MAJORS.map(fastifyAdapter),
  {
    name: 'fetch',
    serve(options, behaviour, late, route) {
      const onErrors = returningOnErrors(jsonResponse, late);
      return serveFetch(fetchWebhook({ ...options, onError: onErrors[behaviour], onErrorTimeoutMs: ON_ERROR_TIMEOUT_MS }, fetchRoute(route)));
    },
  },
  {
    name: 'lambda',
    serve(options, behaviour, late, route) {
      const answer = (error: WebhookError): LambdaWebhookResult => ({
        statusCode: CUSTOM_ERROR_STATUS,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(customErrorBody(error.code)),
      });
      const onErrors = returningOnErrors(answer, late);
      const webhook = lambdaWebhook({ ...options, onError: onErrors[behaviour], onErrorTimeoutMs: ON_ERROR_TIMEOUT_MS }, lambdaRoute(route));
      return serveLambda('http-api', webhook);
    },
  },
  {
    name: 'azure',
    serve(options, behaviour, late, route) {
      const onErrors = returningOnErrors((error: WebhookError) => ({ status: CUSTOM_ERROR_STATUS, jsonBody: customErrorBody(error.code) }), late);
      return serveAzure(azureWebhook({ ...options, onError: onErrors[behaviour], onErrorTimeoutMs: ON_ERROR_TIMEOUT_MS }, azureRoute(route)));
    },
  },
  {
    name: 'h3',
    serve(options, behaviour, late, route) {
      const onErrors = returningOnErrors(jsonResponse, late);
      return serveH3(h3Webhook({ ...options, onError: onErrors[behaviour], onErrorTimeoutMs: ON_ERROR_TIMEOUT_MS }, h3Route(route)));
    },
  },
];

describe.each(adapters)('$name with a user onError, over a socket', (adapter) => {
  let errorLog: ReturnType<typeof vi.spyOn>;
  beforeEach(() => {
    errorLog = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** A receiver whose event evt_1 is held by another delivery, so it refuses with 409 and Retry-After: 30. */
  async function withBusyReceiver(behaviour: Behaviour, run: (post: () => Promise<Response>, app: ServedApp, late: Promise<void>) => Promise<void>) {
    const dedup = new TestDedupStore();
    await dedup.begin(keyOf('evt_1'));
    const route = new RouteSpy();
    let lateTried!: () => void;
    const late = new Promise<void>((resolve) => (lateTried = resolve));
    const app = await adapter.serve({ secret: SECRET, now, dedup: { store: dedup, leaseMs: 30_000 } }, behaviour, lateTried, route);
    const post = () => fetch(`${app.url}/webhooks`, { method: 'POST', ...signedRequest() });
    try {
      await run(post, app, late);
      // Still serving: another event goes through to the route.
      const next = signedRequest({ id: 'evt_next' });
      expect((await fetch(`${app.url}/webhooks`, { method: 'POST', ...next })).status).toBe(204);
      expect(route.calls.map((call) => call.id)).toEqual(['evt_next']);
    } finally {
      await app.close();
    }
  }

  async function expectDefaultAnswer(response: Response): Promise<void> {
    expect(response.status).toBe(409);
    expect(response.headers.get('retry-after')).toBe('30');
    expect(await response.json()).toEqual({ error: { code: 'delivery_in_progress', message: expect.any(String) } });
  }

  it('keeps Retry-After on the answer onError makes itself', async () => {
    await withBusyReceiver('answers', async (post) => {
      const response = await post();
      expect(response.status).toBe(CUSTOM_ERROR_STATUS);
      expect(response.headers.get('retry-after')).toBe('30');
      expect(await response.json()).toEqual(customErrorBody('delivery_in_progress'));
    });
    expect(errorLog).not.toHaveBeenCalled();
  });

  it.each(['throws', 'rejects', 'never answers'] as const)(
    'sends the default answer with Retry-After and reports one line when onError %s',
    async (behaviour) => {
      await withBusyReceiver(behaviour, async (post) => {
        await expectDefaultAnswer(await post());
      });
      expect(errorLog).toHaveBeenCalledTimes(1);
      const line = String(errorLog.mock.calls[0]?.[0]);
      expect(line).toMatch(/^svc-webhooks: onError /);
      expect(line).not.toContain(SECRET.slice(6));
    },
  );

  it('keeps the default answer sent at the deadline when onError answers too late', async () => {
    await withBusyReceiver('answers too late', async (post, _app, late) => {
      await expectDefaultAnswer(await post());
      await late;
      // Whatever the late answer did has settled: a failure of it is caught, not left unhandled.
      await sleep(50);
    });
    expect(String(errorLog.mock.calls[0]?.[0])).toContain(`did not answer within ${ON_ERROR_TIMEOUT_MS} ms`);
  });
});

describe('onErrorTimeoutMs', () => {
  it.each([0, 1.5, 2 ** 31, '100'])('throws TypeError at creation for %s, on every adapter', (onErrorTimeoutMs) => {
    const options = { secret: SECRET, onErrorTimeoutMs: onErrorTimeoutMs as number };
    expect(() => expressWebhook(options)).toThrow(new WebhookOptionsError('svc-webhooks: onErrorTimeoutMs must be a whole number of milliseconds from 1 to 2147483647'));
    expect(() => honoWebhook(options)).toThrow(TypeError);
    expect(() => fastifyWebhook({ ...options, routes: () => undefined })).toThrow(TypeError);
    expect(() => fetchWebhook(options, () => undefined)).toThrow(TypeError);
    expect(() => lambdaWebhook({ ...options, on: {} })).toThrow(TypeError);
  });
});
