import { createServer } from 'node:http';
import type express from 'express';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { verifyWebhook } from '../../adapters/express.js';
import type { WebhookDelivery, WebhookEvent } from '../../src/index.js';
import { adapterContract, CUSTOM_ERROR_STATUS, disconnectContract, customErrorBody, RouteSpy, type HarnessSpec } from '../helpers/adapter-contract.js';
import { orderingContract } from '../helpers/ordering-contract.js';
import { beginAnswerThenThrow, expectBegunAnswerEnded } from '../helpers/begun-answer.js';
import { settleContract } from '../helpers/settle-contract.js';
import { closeServer, fetchHarness, listen, expect413WhileSending } from '../helpers/http-harness.js';
import { errorOf, refusalOf } from '../helpers/refusal.js';
import { SECRET, now, resentAsUtf16le, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { EXPRESS_MAJORS } from '../helpers/host-majors.js';

type Express = typeof express;

/** An app of `express` with the webhook route at /webhooks, after `before` (body parsers under test). */
function webhookApp(
  express: Express,
  { options, route, customErrors }: HarnessSpec,
  ...before: express.RequestHandler[]
): express.Express {
  const app = express();
  const onError = customErrors
    ? (error: { code: Parameters<typeof customErrorBody>[0] }, _req: express.Request, res: express.Response) => {
        res.status(CUSTOM_ERROR_STATUS).json(customErrorBody(error.code));
      }
    : undefined;
  // Express 4 does not catch a route's rejection: hand it to next() as Express 4 apps do.
  app.post('/webhooks', ...before, verifyWebhook({ ...options, onError }), (req, res, next) => {
    expectTypeOf(req.webhook).toEqualTypeOf<WebhookDelivery>();
    expectTypeOf(req.webhook.event).toEqualTypeOf<WebhookEvent>();
    expectTypeOf(req.webhook.id).toEqualTypeOf<string>();
    route.handle(req.webhook.event, req.webhook.id, req.webhook.stale).then((status) => res.status(status).end(), next);
  });
  return app;
}

async function serve(app: express.Express): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(app);
  const url = await listen(server);
  return { url, close: () => closeServer(server) };
}

async function buildHarness(express: Express, spec: HarnessSpec, ...before: express.RequestHandler[]) {
  const { url, close } = await serve(webhookApp(express, spec, ...before));
  return fetchHarness(url, close);
}

describe.each(EXPRESS_MAJORS)('express adapter on %s over HTTP', (_major, express) => {
  adapterContract((spec) => buildHarness(express, spec));
  orderingContract((spec) => buildHarness(express, spec));
  disconnectContract((spec) => buildHarness(express, spec));
  settleContract((spec) => buildHarness(express, spec));

  it.each([
    ['express.raw() left a Buffer', express.raw({ type: '*/*' })],
    ['express.text() left a string', express.text({ type: '*/*' })],
  ])('verifies the body when %s in req.body', async (_name, parser) => {
    const route = new RouteSpy();
    const harness = await buildHarness(express, { options: { secret: SECRET, now }, route }, parser);
    try {
      expect((await harness.post(signedRequest())).status).toBe(204);
      expect(route.calls.map((call) => call.id)).toEqual(['evt_1']);
    } finally {
      await harness.close();
    }
  });

  it('refuses 400 body_decoded, running nothing, when express.text() decoded a signed body sent again as UTF-16LE', async () => {
    const route = new RouteSpy();
    const { url, close } = await serve(webhookApp(express, { options: { secret: SECRET, now }, route }, express.text()));
    try {
      const response = await fetch(`${url}/webhooks`, { method: 'POST', ...resentAsUtf16le(signedRequest()) });
      expect(response.status).toBe(400);
      const error = await errorOf(response);
      expect(error.code).toBe('body_decoded');
      expect(error.message).toContain('before express.text()');
      expect(error.message).toContain('express.text({ verify: (req, _res, buf) => { req.rawBody = buf } })');
      expect(route.calls).toEqual([]);
    } finally {
      await close();
    }
  });

  it.each(['text/plain', 'text/plain; charset=utf-8', 'text/plain; charset="UTF-8"'])('verifies the UTF-8 text express.text() kept from a body of %s', async (contentType) => {
    const route = new RouteSpy();
    const { url, close } = await serve(webhookApp(express, { options: { secret: SECRET, now }, route }, express.text()));
    try {
      const post = ({ body, headers }: SignedRequest) => fetch(`${url}/webhooks`, { method: 'POST', body, headers: { ...headers, 'content-type': contentType } });
      expect((await post(signedRequest())).status).toBe(204);
      const tampered = signedRequest();
      expect(await refusalOf(await post({ ...tampered, body: tampered.body.replace('obj_evt_1', 'obj_evt_2') }))).toEqual({ status: 400, code: 'invalid_signature' });
      expect(route.calls.map((call) => call.id)).toEqual(['evt_1']);
    } finally {
      await close();
    }
  });

  it('answers 500 body_already_parsed, saying how to mount it, when express.json() ran first', async () => {
    const route = new RouteSpy();
    const harness = await buildHarness(express, { options: { secret: SECRET, now }, route }, express.json());
    try {
      const response = await harness.post(signedRequest());
      expect(response.status).toBe(500);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('body_already_parsed');
      expect(error.message).toContain('before express.json()');
      expect(route.calls).toEqual([]);
    } finally {
      await harness.close();
    }
  });

  it('ends the answer an onError began before it threw, rather than write a second one', async () => {
    const route = new RouteSpy();
    const app = express();
    const onError = (_error: unknown, _req: express.Request, res: express.Response) => beginAnswerThenThrow(res);
    app.post('/webhooks', verifyWebhook({ secret: SECRET, now, onError }), (req, res) => void route.handle(req.webhook.event, req.webhook.id).then((status) => res.status(status).end()));
    const { url, close } = await serve(app);
    try {
      await expectBegunAnswerEnded(url, route);
    } finally {
      await close();
    }
  });

  it('answers 413 while a chunked body past the limit is still being sent', async () => {
    const route = new RouteSpy();
    const { url, close } = await serve(webhookApp(express, { options: { secret: SECRET, now, maxPayloadBytes: 64 * 1024 }, route }));
    try {
      await expect413WhileSending(`${url}/webhooks`, signedRequest().headers);
      expect(route.calls).toEqual([]);
    } finally {
      await close();
    }
  });

  it('leaves JSON parsing of other routes in the same app alone', async () => {
    const route = new RouteSpy();
    const app = webhookApp(express, { options: { secret: SECRET, now }, route });
    app.post('/orders', express.json(), (req, res) => {
      res.json({ echoed: req.body });
    });
    const { url, close } = await serve(app);
    try {
      const order = await fetch(`${url}/orders`, {
        method: 'POST',
        body: JSON.stringify({ sku: 'A1' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(await order.json()).toEqual({ echoed: { sku: 'A1' } });
      const { body, headers } = signedRequest();
      expect((await fetch(`${url}/webhooks`, { method: 'POST', body, headers })).status).toBe(204);
    } finally {
      await close();
    }
  });
});

describe('express adapter options', () => {
  it('throws TypeError at creation for an onError that is no function', () => {
    expect(() => verifyWebhook({ secret: SECRET, onError: 'log' as never })).toThrow(TypeError);
  });
});
