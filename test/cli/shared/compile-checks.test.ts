/**
 * An event type's schema compiled from the contract, as `send --contract`
 * runs it: every failure is reported, each as a dotted path, and a schema
 * schemasafe refuses is one line naming where it is.
 */
import { describe, expect, it } from 'vitest';
import type { Contract } from '../../../src/cli/shared/contract.js';
import { ContractError } from '../../../src/cli/shared/contract-error.js';
import { compileChecks, failedPaths } from '../../../src/cli/shared/validator.js';

const event = (schema: object): Contract => ({
  document: { openapi: '3.1.0', components: { schemas: { Event: schema } } },
  events: [{ type: 'call.missed', name: 'callMissed', method: 'post', mediaType: 'application/json', pointer: '#/components/schemas/Event' }],
  warnings: [],
});

const payload = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' }, data: { type: 'object', properties: { 'a/b': { type: 'integer' }, count: { type: 'integer' } } } },
};

describe('the compiled check of an event type', () => {
  it('names every place a value fails, as dotted paths', async () => {
    const [check] = await compileChecks(event(payload));
    const value = { id: 7, data: { 'a/b': 'x', count: 'y' } };
    expect(check!(value)).toBe(false);
    expect(failedPaths(check!, value)).toEqual(['id', 'data.a/b', 'data.count']);
  });

  it('names a failure of the whole value as the root, and none for a value that fits', async () => {
    const [check] = await compileChecks(event(payload));
    expect(check!('text')).toBe(false);
    expect(failedPaths(check!, 'text')).toEqual(['(the root)']);
    expect(check!({ id: 'call_1' })).toBe(true);
    expect(failedPaths(check!, { id: 'call_1' })).toEqual([]);
  });

  it("reads the schema as OpenAPI 3.1 does: JSON Schema 2020-12, with OpenAPI's own keywords (xml) beside it", async () => {
    const tuple = { type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'integer' } };
    const [check] = await compileChecks(event({ ...payload, xml: { name: 'event' }, properties: { ...payload.properties, pair: tuple } }));
    // 2020-12's prefixItems checks the first item, and items only those after it.
    expect(check!({ id: 'call_1', pair: ['call_1', 2] })).toBe(true);
    const wrong = { id: 'call_1', pair: [1, 'x'] };
    expect(check!(wrong)).toBe(false);
    expect(failedPaths(check!, wrong)).toEqual(['pair.0', 'pair.1']);
  });

  it('refuses a string past 4,096 characters before it runs a pattern that has no maxLength and may cost more than its input', async () => {
    const text = { type: 'string', pattern: '^\\w+\\s?\\w*$' };
    const [check] = await compileChecks(event({ ...payload, properties: { ...payload.properties, text } }));
    expect(check!({ id: 'call_1', text: 'a'.repeat(4096) })).toBe(true);
    expect(check!({ id: 'call_1', text: 'a'.repeat(4097) })).toBe(false);
    // The length refused it: the pattern never ran.
    expect(check!.errors).toEqual([{ keywordLocation: '#/$ref/properties/text/maxLength', instanceLocation: '#/text' }]);
    expect(check!({ id: 'call_1', text: 'a b!' })).toBe(false);
    expect(check!.errors).toEqual([{ keywordLocation: '#/$ref/properties/text/pattern', instanceLocation: '#/text' }]);
  });

  it("keeps a pattern's own maxLength, and puts no bound on a pattern that costs no more than its input", async () => {
    const properties = { ...payload.properties, text: { type: 'string', pattern: '^\\w+\\s?\\w*$', maxLength: 10_000 }, phone: { type: 'string', pattern: '^\\+[1-9][0-9]{1,14}$' } };
    const [check] = await compileChecks(event({ ...payload, properties }));
    expect(check!({ id: 'call_1', text: 'a'.repeat(10_000), phone: '+14155550123' })).toBe(true);
    expect(check!({ id: 'call_1', text: 'a'.repeat(10_001) })).toBe(false);
  });

  it('refuses a schema schemasafe cannot compile in one line naming where it is', async () => {
    await expect(compileChecks(event({ type: 'strnig' }))).rejects.toThrow(
      new ContractError('#/components/schemas/Event: its schema cannot be compiled: Unknown type: "strnig" at urn:svc-webhooks:contract#'),
    );
  });
});
