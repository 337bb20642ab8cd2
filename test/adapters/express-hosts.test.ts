/**
 * The Express adapter where the host parsed the body first: a global
 * `express.json()` that keeps (or does not keep) the raw bytes in
 * `req.rawBody`, on Express 4 and 5. NestJS and Cloud Functions follow the
 * same convention and have their own files.
 */
import type { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage } from 'node:http';
import type express from 'express';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, type ExpressEntryOptions } from '../../adapters/express.js';
import { RouteSpy } from '../helpers/adapter-contract.js';
import { EXPRESS_MAJORS } from '../helpers/host-majors.js';
import { closeServer, listen } from '../helpers/http-harness.js';
import { refusalOf } from '../helpers/refusal.js';
import { SECRET, now, signedRequest, type SignedRequest } from '../helpers/signed-request.js';

type KeepRawBody = (req: IncomingMessage & { rawBody?: unknown }, res: unknown, bytes: Buffer) => void;

/** The request with its body tampered after signing; still valid JSON, so a JSON parser takes it. */
function tampered(): SignedRequest {
  const request = signedRequest();
  return { ...request, body: request.body.replace('obj_evt_1', 'obj_evt_2') };
}

describe.each(EXPRESS_MAJORS)('express adapter on %s behind an app-wide parser', (_major, express) => {
  /** An app parsing every body with `parser`, then the webhook route; answers what the route saw. */
  async function withApp(
    parser: express.RequestHandler,
    run: (post: (request: SignedRequest) => Promise<Response>, route: RouteSpy) => Promise<void>,
    options: Partial<ExpressEntryOptions> = {},
  ): Promise<void> {
    const route = new RouteSpy();
    const app = express();
    app.use(parser);
    app.post('/webhooks', verifyWebhook({ secret: SECRET, now, ...options }), (req, res, next) => {
      route.handle(req.webhook.event, req.webhook.id).then((status) => res.status(status).end(), next);
    });
    const server = createServer(app);
    const url = await listen(server);
    try {
      await run(({ body, headers }) => fetch(`${url}/webhooks`, { method: 'POST', body, headers }), route);
    } finally {
      await closeServer(server);
    }
  }

  it.each<[string, KeepRawBody]>([
    ['a Buffer', (req, _res, bytes) => (req.rawBody = bytes)],
    ['a plain Uint8Array', (req, _res, bytes) => (req.rawBody = new Uint8Array(bytes))],
    ['a UTF-8 string', (req, _res, bytes) => (req.rawBody = bytes.toString('utf8'))],
  ])('verifies the bytes express.json({ verify }) kept in req.rawBody as %s', async (_kind, verify) => {
    await withApp(express.json({ verify }), async (post, route) => {
      expect((await post(signedRequest())).status).toBe(204);
      expect(await refusalOf(await post(tampered()))).toEqual({ status: 400, code: 'invalid_signature' });
      expect(route.calls.map((call) => call.id)).toEqual(['evt_1']);
    });
  });

  it('answers 500 body_already_parsed naming the fixes when express.json() kept no raw bytes', async () => {
    await withApp(express.json(), async (post, route) => {
      const response = await post(signedRequest());
      expect(response.status).toBe(500);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('body_already_parsed');
      expect(error.message).toContain('NestFactory.create(AppModule, { rawBody: true })');
      expect(error.message).toContain('before express.json()');
      expect(error.message).toContain('express.json({ verify: (req, _res, buf) => { req.rawBody = buf } })');
      expect(route.calls).toEqual([]);
    });
  });

  it('reads the body itself when the app-wide parser skipped its content type', async () => {
    await withApp(express.json(), async (post, route) => {
      const { body, headers } = signedRequest();
      expect((await post({ body, headers: { ...headers, 'content-type': 'text/plain' } })).status).toBe(204);
      expect(route.calls.map((call) => call.id)).toEqual(['evt_1']);
    });
  });

  it('answers the default refusal when onError throws, on both majors, and the route does not run', async () => {
    const onError = (): void => {
      throw new Error('onError failed');
    };
    await withApp(
      express.raw({ type: '*/*' }),
      async (post, route) => {
        const response = await post(tampered());
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({ error: { code: 'invalid_signature' } });
        expect(route.calls).toEqual([]);
      },
      { onError },
    );
  });
});
