/** A recorded request made ready to send again: the hop's headers dropped, and the three modes. */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { verify } from '../../../src/core/verify.js';
import { UsageError } from '../../../src/cli/shared/args.js';
import { endToEndHeaders, REPLAY_MODES, replayedRequest } from '../../../src/cli/shared/replayed-request.js';
import { signedHeaders } from '../../../src/testing/index.js';

const SECRET = `whsec_${Buffer.from('replayed-request-secret').toString('base64')}`;
const NOW_MS = 1_795_000_000_000;
const BODY = Buffer.from('{"id":"msg_1","type":"message.received","created_at":"2026-11-27T00:00:00Z","data":{"object":{"id":"msg_1"}}}');

describe('endToEndHeaders', () => {
  it('drops the headers of the hop, and keeps the rest', () => {
    const hop = ['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer', 'proxy-connection'];
    const headers = Object.fromEntries([...hop.map((name) => [name, 'x']), ['webhook-id', 'msg_1'], ['x-kept', '1']]);
    expect(endToEndHeaders(headers)).toEqual({ 'webhook-id': 'msg_1', 'x-kept': '1' });
  });

  it('drops those the Connection header names, in any letter case and with blanks around the commas', () => {
    const headers = { connection: 'close, X-Trace ,x-Hop', 'x-trace': '1', 'x-hop': '2', 'x-kept': '3' };
    expect(endToEndHeaders(headers)).toEqual({ 'x-kept': '3' });
  });

  it('keeps every header when there is no Connection header', () => {
    expect(endToEndHeaders({ 'x-a': '1', 'x-b': '2' })).toEqual({ 'x-a': '1', 'x-b': '2' });
  });
});

describe('replayedRequest', () => {
  const recorded = {
    headers: { host: 'tunnel.example', ...signedHeaders(BODY.toString(), { secret: SECRET, id: 'msg_1', timestamp: new Date(NOW_MS - 600_000) }) },
    body: BODY,
  };

  it('knows the three modes', () => expect(REPLAY_MODES).toEqual(['exact', 'resign', 'new-id']));

  it('sends the exact bytes and signed headers as they came, without the hop', () => {
    const exact = replayedRequest(recorded, 'exact', [], NOW_MS);
    expect(exact.body).toBe(BODY);
    expect(exact.headers).toEqual(endToEndHeaders(recorded.headers));
  });

  it('re-signs the same body and id at the time of sending', () => {
    const resigned = replayedRequest(recorded, 'resign', [SECRET], NOW_MS);
    expect(resigned.body).toBe(BODY);
    expect(resigned.headers['webhook-id']).toBe('msg_1');
    expect(resigned.headers['webhook-timestamp']).toBe(String(NOW_MS / 1000));
    expect(resigned.headers.host).toBeUndefined();
    expect(verify(resigned.body, resigned.headers, SECRET, { now: () => NOW_MS }).id).toBe('msg_1');
  });

  it('gives the event a new id, in the body and the header, and signs it', () => {
    const renamed = replayedRequest(recorded, 'new-id', [SECRET], NOW_MS);
    const id = renamed.headers['webhook-id']!;
    expect(id).toMatch(/^msg_\w+$/);
    expect(id).not.toBe('msg_1');
    expect(JSON.parse(renamed.body.toString())).toEqual({ ...JSON.parse(BODY.toString()), id });
    expect(verify(renamed.body, renamed.headers, SECRET, { now: () => NOW_MS }).id).toBe(id);
  });

  it('refuses to re-sign without a recorded id, and to rename a body that is no JSON object', () => {
    expect(() => replayedRequest({ headers: {}, body: BODY }, 'resign', [SECRET], NOW_MS)).toThrow(
      new UsageError('resign needs the recorded webhook-id, and this delivery has none'),
    );
    for (const body of ['[1]', 'null', 'not json']) {
      expect(() => replayedRequest({ headers: { 'webhook-id': 'msg_1' }, body: Buffer.from(body) }, 'new-id', [SECRET], NOW_MS)).toThrow(
        new UsageError('new-id needs a body that is a JSON object, to give it a new id'),
      );
    }
  });
});
