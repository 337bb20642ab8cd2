import { type } from 'arktype';
import fc from 'fast-check';
import * as v from 'valibot';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { dispatch, WebhookVerificationError, type StandardSchema, type StandardSchemaIssue, type WebhookEvent } from '../../src/index.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';
import { MAX_REPORTED_PATHS } from '../../src/receive/event-validation.js';
import { eventOf } from './events.js';

/** The same call.missed schema in each library: `data.object.id` comes out upper-cased, so the output differs from the input. */
const libraries = {
  zod: z.object({
    id: z.string(),
    type: z.literal('call.missed'),
    data: z.object({
      object: z.object({ id: z.string().transform((id) => id.toUpperCase()), from: z.string(), duration: z.number(), tags: z.array(z.string()) }),
    }),
  }),
  valibot: v.object({
    id: v.string(),
    type: v.literal('call.missed'),
    data: v.object({
      object: v.object({
        id: v.pipe(
          v.string(),
          v.transform((id) => id.toUpperCase()),
        ),
        from: v.string(),
        duration: v.number(),
        tags: v.array(v.string()),
      }),
    }),
  }),
  arktype: type({
    id: 'string',
    type: "'call.missed'",
    data: { object: { id: type('string').pipe((id) => id.toUpperCase()), from: 'string', duration: 'number', tags: 'string[]' } },
  }),
} satisfies Record<string, StandardSchema>;

const valid = (): WebhookEvent => eventOf('call.missed', 'evt_1', { from: '+15550100', duration: 12, tags: ['vip'] });
const invalid = (from: unknown, duration: unknown, tag: unknown): WebhookEvent => eventOf('call.missed', 'evt_1', { from, duration, tags: ['vip', tag] });
const FAILING_PATHS = ['$.data.object.duration', '$.data.object.from', '$.data.object.tags[1]'];
const quiet = { onHandlerError: () => {} };

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(Object.entries(libraries))('schemas with %s', (_library, schema) => {
  it("validates the whole event, then hands the handler the schema's output", async () => {
    const seen: unknown[] = [];
    const event = valid();
    const result = await dispatch(event, { 'call.missed': (output) => void seen.push(output) }, { schemas: { 'call.missed': schema } });
    expect(result).toEqual({ status: 204, headers: {}, body: undefined });
    // Keys the schema does not name: zod and valibot drop them, arktype keeps them.
    expect(seen).toMatchObject([{ id: 'evt_1', type: 'call.missed', data: { object: { id: 'OBJ_EVT_1', from: '+15550100', duration: 12, tags: ['vip'] } } }]);
    expect(event).toEqual(valid());
  });

  it('answers 422 invalid_event_data with the failing paths and none of the values, without running the handler', async () => {
    const handler = vi.fn();
    const reports: unknown[] = [];
    const result = await dispatch(
      invalid(5550100999, 'call-lasted-forever', 4242424242),
      { 'call.missed': handler },
      { schemas: { 'call.missed': schema }, onHandlerError: (error) => reports.push(error) },
    );
    expect(result.status).toBe(422);
    expect(result.body?.error.code).toBe('invalid_event_data');
    expect([...(result.body?.error.paths ?? [])].sort()).toEqual(FAILING_PATHS);
    expect(result.error).toMatchObject({ code: 'invalid_event_data', status: 422 });
    for (const value of ['5550100999', 'call-lasted-forever', '4242424242', 'received', 'was']) {
      expect(JSON.stringify(result.body)).not.toContain(value);
      expect(result.error?.message).not.toContain(value);
    }
    expect(handler).not.toHaveBeenCalled();
    expect(reports).toEqual([result.error]);
  });

  it('never sends a value that failed the schema (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.integer({ min: 1_000_000 }), fc.string(), async (text, number, tag) => {
        const markedText = `VALUE:${text}`;
        const result = await dispatch(invalid(number, markedText, { tag }), { 'call.missed': () => {} }, { schemas: { 'call.missed': schema }, ...quiet });
        expect(result.status).toBe(422);
        const sent = JSON.stringify(result);
        expect(sent).not.toContain('VALUE:');
        expect(sent).not.toContain(String(number));
        expect([...(result.body?.error.paths ?? [])].sort()).toEqual(FAILING_PATHS);
      }),
      { numRuns: 50 },
    );
  });
});

/** A hand-made Standard Schema, to reach what the libraries above do not produce. */
function schemaAnswering(validate: StandardSchema['~standard']['validate']): StandardSchema {
  return { '~standard': { version: 1, vendor: 'test', validate } };
}
const failingWith = (issues: StandardSchemaIssue[]): StandardSchema => schemaAnswering(() => ({ issues }));

describe('schema outcomes', () => {
  it('awaits an asynchronous schema (zod with an async refinement)', async () => {
    const knownCaller = z.object({ data: z.object({ object: z.object({ id: z.string().refine(async (id) => id !== 'obj_blocked') }) }) });
    const on = { 'call.missed': () => {} };
    expect((await dispatch(eventOf('call.missed', 'evt_1'), on, { schemas: { 'call.missed': knownCaller } })).status).toBe(204);
    const refused = await dispatch(eventOf('call.missed', 'blocked'), on, { schemas: { 'call.missed': knownCaller }, ...quiet });
    expect(refused.body?.error.paths).toEqual(['$.data.object.id']);
  });

  it.each([
    ...failingBothWays(new Error('schema bug quoting +15550100')).map(([name, validate]) => [name, schemaAnswering(validate)] as const),
    ['answers nothing', schemaAnswering(() => undefined as never)] as const,
  ])('answers 500 handler_failed when the schema %s, without running the handler', async (_name, schema) => {
    const handler = vi.fn();
    const result = await dispatch(eventOf('call.missed'), { 'call.missed': handler }, { schemas: { 'call.missed': schema }, ...quiet });
    expect(result).toMatchObject({ status: 500, body: { error: { code: 'handler_failed' } } });
    expect(JSON.stringify(result)).not.toContain('15550100');
    expect(handler).not.toHaveBeenCalled();
  });

  it('names paths from the root in JSONPath notation', async () => {
    const schema = failingWith([
      { message: 'root', path: [] },
      { message: 'no path' },
      { message: 'segments', path: [{ key: 'data' }, { key: 'items' }, { key: 0 }] },
      { message: 'odd keys', path: ['data', 'a b', 'x"y', '0', 'ok_$1', Symbol('s')] },
      { message: 'duplicate', path: ['data', 'items', 0] },
    ]);
    const result = await dispatch(eventOf('call.missed'), { 'call.missed': () => {} }, { schemas: { 'call.missed': schema }, ...quiet });
    expect(result.body?.error.paths).toEqual(['$', '$.data.items[0]', '$.data["a b"]["x\\"y"]["0"].ok_$1[Symbol(s)]']);
    expect(result.body?.error.message).toBe(`the event failed the schema for its type at ${result.body?.error.paths?.join(', ')}`);
  });

  it('names at most MAX_REPORTED_PATHS paths', async () => {
    const issues = Array.from({ length: MAX_REPORTED_PATHS + 10 }, (_, i) => ({ message: 'bad', path: ['data', `field${i}`] }));
    const result = await dispatch(eventOf('call.missed'), { 'call.missed': () => {} }, { schemas: { 'call.missed': failingWith(issues) }, ...quiet });
    expect(result.body?.error.paths).toHaveLength(MAX_REPORTED_PATHS);
  });

  it('treats an empty issues list as a failure, as the standard says', async () => {
    const result = await dispatch(eventOf('call.missed'), { 'call.missed': () => {} }, { schemas: { 'call.missed': failingWith([]) }, ...quiet });
    expect(result).toMatchObject({ status: 422, body: { error: { message: 'the event failed the schema for its type', paths: [] } } });
  });

  it('logs one line by default with the paths, for the operator to fix the schema within the retry window', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const schema = failingWith([{ message: 'Expected number but received "+15550100"', path: ['data', 'object', 'duration'] }]);
    await dispatch(eventOf('call.missed', 'evt_3'), { 'call.missed': () => {} }, { schemas: { 'call.missed': schema } });
    expect(log.mock.calls).toEqual([
      [
        'svc-webhooks: event "evt_3" of type "call.missed": the event failed the schema for its type at $.data.object.duration; ' +
          'the sender will retry it',
      ],
    ]);
  });

  it('hands onHandlerError the refusal as a WebhookVerificationError', async () => {
    const reports: unknown[] = [];
    const schema = failingWith([{ message: 'bad', path: ['id'] }]);
    await dispatch(eventOf('call.missed'), { 'call.missed': () => {} }, { schemas: { 'call.missed': schema }, onHandlerError: (error) => reports.push(error) });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toBeInstanceOf(WebhookVerificationError);
    expect(reports[0]).toMatchObject({ code: 'invalid_event_data', message: 'the event failed the schema for its type at $.id' });
  });
});
