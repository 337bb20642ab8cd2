/**
 * The Express adapter on Google Cloud Functions: the Functions Framework
 * parses every body before the function runs and keeps the bytes in
 * `req.rawBody`. The function is an Express app (of either major) with the
 * webhook route, as deployed; the server is the one the framework builds.
 */
import { randomUUID } from 'node:crypto';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../adapters/express.js';
import { RouteSpy } from '../helpers/adapter-contract.js';
import { EXPRESS_MAJORS } from '../helpers/host-majors.js';
import { closeServer, listen } from '../helpers/http-harness.js';
import { refusalOf } from '../helpers/refusal.js';
import { SECRET, now, signedRequest } from '../helpers/signed-request.js';

describe.each(EXPRESS_MAJORS)('express adapter on Cloud Functions, in an app of %s', (_major, express) => {
  it.each([
    ['application/json', 'its JSON parser'],
    ['text/plain', 'its text parser'],
    ['application/octet-stream', 'its raw parser'],
  ])('verifies the bytes kept for a %s delivery by %s, runs the route once, refuses tampered bytes', async (contentType) => {
    const route = new RouteSpy();
    const app = express();
    app.post('/', verifyWebhook({ secret: SECRET, now }), (req, res, next) => {
      route.handle(req.webhook.event, req.webhook.id).then((status) => res.status(status).end(), next);
    });
    const name = `webhooks-${randomUUID()}`;
    http(name, app);
    const server = getTestServer(name);
    const url = await listen(server);
    try {
      const { body, headers } = signedRequest();
      const post = (sent: string): Promise<Response> =>
        fetch(url, { method: 'POST', body: sent, headers: { ...headers, 'content-type': contentType } });
      expect((await post(body)).status).toBe(204);
      expect(await refusalOf(await post(body.replace('obj_evt_1', 'obj_evt_2')))).toEqual({ status: 400, code: 'invalid_signature' });
      expect(route.calls.map((call) => call.id)).toEqual(['evt_1']);
    } finally {
      await closeServer(server);
    }
  });
});
