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

  it('refuses a schema schemasafe cannot compile in one line naming where it is', async () => {
    await expect(compileChecks(event({ type: 'strnig' }))).rejects.toThrow(
      new ContractError('#/components/schemas/Event: its schema cannot be compiled: Unknown type: "strnig" at urn:svc-webhooks:contract#'),
    );
  });
});
