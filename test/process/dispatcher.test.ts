/** Validating an event against its schema, naming paths and never values, and the fixed refusal for a handler that failed. */
import { describe, expect, it } from 'vitest';
import { WebhookHandlerError, type StandardSchema, type StandardSchemaIssue } from '../../src/index.js';
import { handlerFailed, validateEvent } from '../../src/process/dispatcher.js';
import { eventOf } from '../helpers/events.js';
import { failingBothWays } from '../helpers/failing-callbacks.js';
import { deliveryOfEvent } from '../helpers/signed-request.js';

describe('validateEvent', () => {
  it('answers the value the schema gave on success', async () => {
    const schema: StandardSchema = { '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value: { parsed: value } }) } };
    expect(await validateEvent(schema, 7)).toEqual({ valid: true, value: { parsed: 7 } });
  });

  it('names each kind of segment, plain keys dotted and the others in brackets', async () => {
    expect(await pathsOf(undefined, [], ['data', 'object', 'items', 0, 'id'], [{ key: 'data' }, { key: 3 }], ['odd key', '1st', 'a$_9'], [Symbol('s')])).toEqual([
      '$',
      '$.data.object.items[0].id',
      '$.data[3]',
      '$["odd key"]["1st"].a$_9',
      '$[Symbol(s)]',
    ]);
  });

  it('names a segment that is null rather than failing on it', async () => {
    expect(await pathsOf([null as never, 'id'])).toEqual(['$[null].id']);
  });

  it('names each path once, and 20 at most', async () => {
    const many = Array.from({ length: 25 }, (_, i) => ['items', i]);
    const paths = await pathsOf(['id'], ['id'], ...many);
    expect(paths).toHaveLength(20);
    expect(paths.slice(0, 2)).toEqual(['$.id', '$.items[0]']);
  });
});

const delivery = deliveryOfEvent(eventOf('call.missed', 'evt_9'));

describe('handlerFailed', () => {
  it('tells onHandlerError what the handler threw, and answers the fixed 500 that quotes none of it', () => {
    const reports: unknown[][] = [];
    const thrown = new Error('db password hunter2');
    const error = handlerFailed((...args) => void reports.push(args), thrown, delivery);
    expect(reports).toEqual([[thrown, delivery.event, delivery]]);
    expect(error).toBeInstanceOf(WebhookHandlerError);
    expect(error).toMatchObject({ code: 'handler_failed', status: 500, message: 'the handler for this event failed; retry later' });
  });

  it.each(failingBothWays(new Error('reporter down')))('answers the same 500 when onHandlerError %s', (_how, onHandlerError) => {
    const error = handlerFailed(onHandlerError, new Error('boom'), delivery);
    expect(error).toMatchObject({ code: 'handler_failed', status: 500 });
  });
});

async function pathsOf(...paths: Array<StandardSchemaIssue['path']>): Promise<readonly string[]> {
  const outcome = await validateEvent(failingWith(paths.map((path) => ({ message: 'bad value 42', path }))), {});
  if (outcome.valid) throw new Error('expected a failure');
  return outcome.paths;
}

/** A schema whose every validation fails with `issues`. */
function failingWith(issues: StandardSchemaIssue[]): StandardSchema {
  return { '~standard': { version: 1, vendor: 'test', validate: () => ({ issues }) } };
}
