/** testLambdaContext: the runtime's context, a fresh request id, and the time left on the clock given. */
import { describe, expect, it } from 'vitest';
import { WebhookOptionsError } from '../../src/base/options-error.js';
import { testLambdaContext } from '../../src/testing/index.js';

describe('testLambdaContext', () => {
  it("names the function everywhere the runtime does, and gives each context a request id of its own", () => {
    const context = testLambdaContext({ functionName: 'hooks' });
    expect(context).toMatchObject({
      callbackWaitsForEmptyEventLoop: true,
      functionName: 'hooks',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:hooks',
      memoryLimitInMB: '128',
      logGroupName: '/aws/lambda/hooks',
    });
    expect(context.awsRequestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(context.logStreamName).toContain(context.awsRequestId.replaceAll('-', ''));
    expect(testLambdaContext().awsRequestId).not.toBe(context.awsRequestId);
    expect(testLambdaContext({ awsRequestId: 'req-1' }).awsRequestId).toBe('req-1');
    expect(testLambdaContext().functionName).toBe('webhooks');
  });

  it("counts the time left down from the timeout on the clock given, Lambda's 3 s by default, never below 0", () => {
    let clock = 1_000;
    const context = testLambdaContext({ now: () => clock });
    expect(context.getRemainingTimeInMillis()).toBe(3_000);
    clock += 1_200;
    expect(context.getRemainingTimeInMillis()).toBe(1_800);
    clock += 5_000;
    expect(context.getRemainingTimeInMillis()).toBe(0);
    expect(testLambdaContext({ now: () => clock, timeoutMs: 10_000 }).getRemainingTimeInMillis()).toBe(10_000);
  });

  it.each(['done', 'fail', 'succeed'] as const)('throws for context.%s(), naming what to do instead', (name) => {
    expect(() => testLambdaContext()[name](new Error('x'))).toThrow(`svc-webhooks: context.${name}() is not supported by testLambdaContext(); answer from an async handler`);
  });

  it.each([
    [{ timeoutMs: 0 }, 'svc-webhooks: timeoutMs must be a whole number of milliseconds from 1 to 9007199254740991'],
    [{ now: 5 }, 'svc-webhooks: now must be a function'],
    [5, 'svc-webhooks: testLambdaContext options must be an object'],
  ])('refuses %j', (options, message) => {
    expect(() => testLambdaContext(options as never)).toThrow(new WebhookOptionsError(message));
  });
});
