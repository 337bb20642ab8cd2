/** createHandlingReceiver: the plain receiver without on; with on, it answers each delivery itself. */
import { describe, expect, it } from 'vitest';
import { createHandlingReceiver } from '../../src/receive/handling-receiver.js';
import { now, SECRET, signedRequest } from '../helpers/signed-request.js';

describe('createHandlingReceiver', () => {
  it('hands a verified delivery to the route when there is no on', async () => {
    const receiver = createHandlingReceiver({ secret: SECRET, now, dedup: false });
    const { body, headers } = signedRequest();
    const reception = await receiver.receive(body, headers);
    expect(reception).toMatchObject({ action: 'process', delivery: { id: 'evt_1' } });
  });

  it('answers 204 itself once the handler of on ran', async () => {
    const handled: string[] = [];
    const receiver = createHandlingReceiver({ secret: SECRET, now, dedup: false, on: { 'call.missed': (_event, { id }) => void handled.push(id) } });
    const { body, headers } = signedRequest({ type: 'call.missed' });
    expect(await receiver.receive(body, headers)).toEqual({ action: 'respond', response: { status: 204, headers: {}, body: undefined }, error: undefined });
    expect(handled).toEqual(['evt_1']);
  });
});
