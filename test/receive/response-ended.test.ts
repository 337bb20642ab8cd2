/** responseEnded on real Node responses: at once when one has ended or is gone, else at its end or its close. */
import { once } from 'node:events';
import { createServer, request, type ClientRequest, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responseEnded } from '../../src/receive/response-ended.js';
import { closeServer, listen } from '../helpers/http-harness.js';

const server = createServer((_request, response) => arriving.shift()?.(response));
const arriving: Array<(response: ServerResponse) => void> = [];
let baseUrl: string;

beforeAll(async () => {
  baseUrl = await listen(server);
});

afterAll(() => closeServer(server));

/** A request in flight: the server's response to it, still open, and the client's side. */
async function openResponse(): Promise<{ response: ServerResponse; client: ClientRequest }> {
  const arrived = new Promise<ServerResponse>((resolve) => arriving.push(resolve));
  const client = request(baseUrl, { agent: false });
  client.on('error', () => undefined);
  client.end();
  return { response: await arrived, client };
}

/** Whether `promise` has resolved by the next turn of the event loop. */
function stateOf(promise: Promise<void>): Promise<'ended' | 'pending'> {
  const nextTurn = new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')));
  return Promise.race([promise.then(() => 'ended' as const), nextTurn]);
}

describe('responseEnded', () => {
  it('waits while the response is open, and resolves once the route ends it', async () => {
    const { response } = await openResponse();
    const ended = responseEnded(response);
    expect(await stateOf(ended)).toBe('pending');
    response.end('done');
    await once(response, 'close');
    expect(await stateOf(ended)).toBe('ended');
  });

  it('resolves when the sender hangs up before the response ends', async () => {
    const { response, client } = await openResponse();
    const ended = responseEnded(response);
    client.destroy();
    await once(response, 'close');
    expect(response.writableEnded).toBe(false);
    expect(await stateOf(ended)).toBe('ended');
  });

  it('resolves at once for a response that already ended', async () => {
    const { response } = await openResponse();
    response.end('done');
    await once(response, 'close');
    expect(await stateOf(responseEnded(response))).toBe('ended');
  });

  it('resolves at once for a response destroyed without ending', async () => {
    const { response } = await openResponse();
    response.destroy();
    await once(response, 'close');
    expect(response.writableEnded).toBe(false);
    expect(await stateOf(responseEnded(response))).toBe('ended');
  });
});
