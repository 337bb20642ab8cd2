/** Where an event failed its schema, as the answer names it: JSONPath from the root, never a value. */
import { describe, expect, it } from 'vitest';
import type { StandardSchema, StandardSchemaIssue } from '../../src/receive/standard-schema.js';
import { MAX_REPORTED_PATHS, validateEvent } from '../../src/receive/event-validation.js';

/** A schema that fails with `issues`. */
function failingWith(issues: StandardSchemaIssue[]): StandardSchema {
  return { '~standard': { version: 1, vendor: 'test', validate: () => ({ issues }) } };
}

async function pathsOf(...paths: Array<StandardSchemaIssue['path']>): Promise<readonly string[]> {
  const outcome = await validateEvent(failingWith(paths.map((path) => ({ message: 'bad value 42', path }))), {});
  if (outcome.valid) throw new Error('expected a failure');
  return outcome.paths;
}

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

  it(`names each path once, and ${MAX_REPORTED_PATHS} at most`, async () => {
    const many = Array.from({ length: MAX_REPORTED_PATHS + 5 }, (_, i) => ['items', i]);
    const paths = await pathsOf(['id'], ['id'], ...many);
    expect(paths).toHaveLength(MAX_REPORTED_PATHS);
    expect(paths.slice(0, 2)).toEqual(['$.id', '$.items[0]']);
  });
});
