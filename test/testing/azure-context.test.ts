/** testAzureContext: the members of Azure's InvocationContext, its log methods going to the log handler at Azure's levels. */
import { InvocationContext } from '@azure/functions';
import { describe, expect, it, vi } from 'vitest';
import { WebhookOptionsError } from '../../src/base/options-error.js';
import { testAzureContext } from '../../src/testing/index.js';

describe('testAzureContext', () => {
  it("sends each log method to the handler at the level Azure's own class does", () => {
    const ours: unknown[][] = [];
    const azures: unknown[][] = [];
    const context = testAzureContext({ logHandler: (...args) => void ours.push(args) });
    const azure = new InvocationContext({ logHandler: (...args) => void azures.push(args) });
    for (const name of ['log', 'trace', 'debug', 'info', 'warn', 'error'] as const) {
      context[name](name, 1);
      azure[name](name, 1);
    }
    expect(ours).toEqual(azures);
  });

  it("logs to the console by default, as Azure's class does", () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      testAzureContext().log('received', 'evt_1');
      testAzureContext().warn('late');
      expect([info.mock.calls, warn.mock.calls]).toEqual([[['received', 'evt_1']], [['late']]]);
    } finally {
      info.mockRestore();
      warn.mockRestore();
    }
  });

  it('keeps extra inputs and outputs by name, given as a name or as a binding', () => {
    const context = testAzureContext();
    context.extraOutputs.set({ name: 'queue' }, ['evt_1']);
    context.extraInputs.set('blob', 'bytes');
    expect([context.extraOutputs.get('queue'), context.extraInputs.get({ name: 'blob' }), context.extraInputs.get('queue')]).toEqual([['evt_1'], 'bytes', undefined]);
    expect(testAzureContext().extraOutputs.get('queue')).toBeUndefined();
  });

  it('names the invocation afresh unless told, and the function webhooks unless told', () => {
    const context = testAzureContext();
    expect(context.invocationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(testAzureContext().invocationId).not.toBe(context.invocationId);
    expect(testAzureContext({ invocationId: 'inv-1', functionName: 'hooks' })).toMatchObject({ invocationId: 'inv-1', functionName: 'hooks' });
    expect(context).toMatchObject({ functionName: 'webhooks', options: { trigger: { type: 'httpTrigger', name: 'httpTrigger1' }, extraInputs: [], extraOutputs: [] } });
  });

  it('refuses options that are no object, and a log handler that is no function', () => {
    expect(() => testAzureContext('inv-1' as never)).toThrow(new WebhookOptionsError('svc-webhooks: testAzureContext options must be an object'));
    expect(() => testAzureContext({ logHandler: 'console' as never })).toThrow(new WebhookOptionsError('svc-webhooks: logHandler must be a function'));
  });
});
