/**
 * The validators `svc-webhooks types --schemas` writes, at run time: the
 * fixture events testEvent builds pass them, and a wrong one is refused
 * 422 with its paths, through the Fetch entry over HTTP.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StandardSchema, WebhookEvent } from '../../../src/index.js';
import { signedRequest, testEvent } from '../../../src/testing/index.js';
import { verifyWebhook } from '../../../adapters/fetch.js';
import { serveFetch, type ServedApp } from '../../helpers/adapter-servers.js';
import { runTypes } from '../../helpers/contract-types.js';

const SECRET = 'whsec_c2VjcmV0LWZvci1jb250cmFjdC1zY2hlbWFz';

interface SchemasModule {
  readonly schemas: Readonly<Record<string, StandardSchema>>;
  readonly schemasFor: (on: object) => Record<string, StandardSchema>;
}

let generated: SchemasModule;
let served: ServedApp;
const handled: WebhookEvent[] = [];
const failures: unknown[] = [];

beforeAll(async () => {
  const run = await runTypes('rich.yaml', ['--schemas']);
  expect(run.code).toBe(0);
  generated = (await import(join(run.dir, 'webhook-types.schemas.ts'))) as SchemasModule;
  const record = (event: WebhookEvent): void => void handled.push(event);
  const on = { 'call.missed': record, 'voicemail.received': record };
  const onHandlerError = (error: unknown): void => void failures.push(error);
  served = await serveFetch(verifyWebhook({ secret: SECRET, on, schemas: generated.schemasFor(on) as never, onHandlerError }));
}, 60_000);

afterAll(() => served?.close());

const voicemail = (object: object): WebhookEvent =>
  testEvent('voicemail.received' as never, { data: { object: { call: call(), durationMs: 4200, transcript: null, ...object } } } as never);
const call = (): object => ({ id: 'call_1', from: { number: '+15550100', name: null }, to: { number: '+15550199' }, direction: 'inbound' });

async function post(event: WebhookEvent): Promise<Response> {
  return fetch(signedRequest(event, { secret: SECRET, url: `${served.url}/webhooks` }));
}

describe('the validators of svc-webhooks types --schemas', () => {
  it('pass the fixture events testEvent builds, checked as testEvent checks them', () => {
    const { schemas } = generated;
    expect(() => testEvent('call.missed', { data: { object: call() } } as never, { schemas })).not.toThrow();
    expect(() => testEvent('message.received', { data: { object: { id: 'msg_1', from: { number: '+15550100' }, content: { kind: 'text', text: 'hi' } } } } as never, { schemas })).not.toThrow();
    expect(() => testEvent('message.received', { data: { object: { id: 'msg_1', from: { number: '+15550100' }, content: { kind: 'media', urls: [], caption: null } } } } as never, { schemas })).not.toThrow();
    expect(() => testEvent('webhook.test', {}, { schemas })).not.toThrow();
    expect(() => testEvent('call.missed', {}, { schemas })).toThrow("testEvent('call.missed') fails its schema at data.object");
  });

  it('take a valid event through the entry: the handler runs, 204', async () => {
    const event = voicemail({});
    const answer = await post(event);
    expect(answer.status).toBe(204);
    expect(handled.at(-1)).toEqual(event);
  });

  it('refuse a wrong event with its paths, never its values: 422 invalid_event_data, and the handler does not run', async () => {
    const before = handled.length;
    const answer = await post(voicemail({ durationMs: 'long', call: { ...call(), from: { number: 'not a number' } } }));
    expect(answer.status).toBe(422);
    const body = await answer.text();
    expect(JSON.parse(body)).toMatchObject({ error: { code: 'invalid_event_data' } });
    expect(body).toContain('data.object.call.from.number');
    expect(body).toContain('data.object.durationMs');
    expect(body).not.toContain('not a number');
    expect(handled.length).toBe(before);
    expect(failures).toEqual([expect.objectContaining({ code: 'invalid_event_data' })]);
  });

  it('hold an enum, a null where the contract allows none, and the discriminated content', () => {
    const check = (type: string, value: unknown) => generated.schemas[type]!['~standard'].validate(value);
    const base = testEvent('message.received', { data: { object: { id: 'msg_1', from: { number: '+15550100' } } } } as never);
    const withContent = (content: object) => ({ ...base, data: { object: { ...base.data.object, content } } });
    expect(check('message.received', withContent({ kind: 'text', text: 'hi' }))).toEqual({ value: withContent({ kind: 'text', text: 'hi' }) });
    expect(check('message.received', withContent({ kind: 'media', urls: ['u'], caption: null }))).not.toHaveProperty('issues');
    expect(check('message.received', withContent({ kind: 'text' }))).toHaveProperty('issues');
    expect(check('call.missed', testEvent('call.missed', { data: { object: { ...call(), direction: 'sideways' } } } as never))).toMatchObject({
      issues: [{ message: 'fails "enum"', path: ['data', 'object', 'direction'] }],
    });
    expect(check('call.missed', testEvent('call.missed', { data: { object: { ...call(), to: { number: '+15550199', name: 7 } } } } as never))).toMatchObject({
      issues: [{ path: ['data', 'object', 'to', 'name'] }],
    });
  });

  it('are picked for the handled types alone by schemasFor', () => {
    expect(Object.keys(generated.schemasFor({ 'call.missed': () => {}, 'transcript.ready': () => {} }))).toEqual(['call.missed']);
  });
});

describe('the validators of a contract that names formats and keys an object by any text', () => {
  let formats: SchemasModule;
  let app: ServedApp;

  beforeAll(async () => {
    // date-time, uuid and email, OpenAPI's int32, int64, double and password, and a format of the contract's own.
    const run = await runTypes('formats.yaml', ['--schemas']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    formats = (await import(join(run.dir, 'webhook-types.schemas.ts'))) as SchemasModule;
    const on = { 'message.received': () => {} };
    app = await serveFetch(verifyWebhook({ secret: SECRET, on, schemas: formats.schemasFor(on) as never, onHandlerError: () => {} }));
  }, 60_000);

  afterAll(() => app?.close());

  const message = (object: object): WebhookEvent =>
    testEvent('message.received' as never, { data: { object: { id: 'msg_1', from: '+15550100', ...object } } } as never);
  const check = (value: unknown) => formats.schemas['message.received']!['~standard'].validate(value);

  it('leave format unchecked, as 2020-12 has it: an annotation', () => {
    const odd = message({ replyTo: 'nobody', segments: 2 ** 40, bytes: 1, cost: 0.5, pin: '', format: 'text', labels: {} });
    expect(check({ ...odd, timestamp: 'yesterday' })).toEqual({ value: { ...odd, timestamp: 'yesterday' } });
    // The property named "format" is still checked.
    expect(check(message({ format: 'fax' }))).toMatchObject({ issues: [{ message: 'fails "enum"', path: ['data', 'object', 'format'] }] });
  });

  it('name a key as it is written, "%", "/" and "~" included, and never throw on it', () => {
    const path = (labels: object) => (check(message({ labels })) as unknown as { issues: Array<{ path: string[] }> }).issues.map((issue) => issue.path);
    expect(path({ '50%': 1 })).toEqual([['data', 'object', 'labels', '50%']]);
    expect(path({ '%E0%A4%A': 1, '%41': 1 })).toEqual([
      ['data', 'object', 'labels', '%E0%A4%A'],
      ['data', 'object', 'labels', '%41'],
    ]);
    expect(path({ 'a/b/c': 1, 'x~1': 1, 'y~/z': 1, '': 1 })).toEqual([
      ['data', 'object', 'labels', 'a/b/c'],
      ['data', 'object', 'labels', 'x~1'],
      ['data', 'object', 'labels', 'y~/z'],
      ['data', 'object', 'labels', ''],
    ]);
  });

  it('answer 422 with the path of a key holding "%", not 500', async () => {
    const answer = await fetch(signedRequest(message({ labels: { '50%': 1 } }), { secret: SECRET, url: `${app.url}/webhooks` }));
    expect(answer.status).toBe(422);
    expect(await answer.json()).toMatchObject({ error: { code: 'invalid_event_data', paths: ['$.data.object.labels["50%"]'] } });
  });
});
