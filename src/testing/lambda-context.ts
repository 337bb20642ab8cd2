/**
 * A Lambda invocation context for tests, shaped as the Node.js runtime
 * passes it (`@types/aws-lambda`'s `Context`), with a fresh request id and a
 * remaining time on an injectable clock.
 */
import { randomUUID } from 'node:crypto';
import { checkCallback, checkDuration, checkOptionsObject } from '../base/option-checks.js';

/** A Lambda invocation context, as `@types/aws-lambda`'s `Context` describes it. */
export interface TestLambdaContext {
  /** Whether Lambda waits for the event loop to empty before it freezes the function: `true`, its default. */
  callbackWaitsForEmptyEventLoop: boolean;
  /** The function's name. */
  functionName: string;
  /** `$LATEST`. */
  functionVersion: string;
  /** The function's ARN. */
  invokedFunctionArn: string;
  /** `128`. */
  memoryLimitInMB: string;
  /** The invocation's id. */
  awsRequestId: string;
  /** The function's log group. */
  logGroupName: string;
  /** The invocation's log stream. */
  logStreamName: string;
  /** Milliseconds left of the function's timeout, never below 0. */
  getRemainingTimeInMillis(): number;
  /** Throws: the runtime's old way to end an invocation; return a result from an async handler instead. */
  done(error?: Error, result?: unknown): void;
  /** Throws: the runtime's old way to end an invocation; throw from an async handler instead. */
  fail(error: Error | string): void;
  /** Throws: the runtime's old way to end an invocation; return a result from an async handler instead. */
  succeed(messageOrObject: unknown, object?: unknown): void;
}

/** Options of `testLambdaContext()`. */
export interface TestLambdaContextOptions {
  /**
   * The function's name, in its ARN and log group too.
   * @default 'webhooks'
   */
  readonly functionName?: string;
  /**
   * The invocation's id.
   * @default a fresh UUID
   */
  readonly awsRequestId?: string;
  /**
   * The function's timeout, from which `getRemainingTimeInMillis()` counts down.
   * @default 3000 (Lambda's default)
   */
  readonly timeoutMs?: number;
  /**
   * The clock `getRemainingTimeInMillis()` reads, in milliseconds; the invocation starts at its first reading.
   * @default Date.now
   */
  readonly now?: () => number;
}

/**
 * A Lambda invocation context, to call a Lambda handler with in a test:
 * `awsRequestId` fresh unless given, `getRemainingTimeInMillis()` counting
 * down from `timeoutMs` on `now`. Its `done`, `fail` and `succeed` throw:
 * the kit calls async handlers.
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/lambda';
 * import { signedLambdaEvent, testEvent, testLambdaContext } from 'svc-webhooks/testing';
 *
 * const secret = 'whsec_c2VjcmV0LWZvci10ZXN0cw==';
 * const handler = verifyWebhook({ secret }, async (_event, { context }) => {
 *   console.log(context.awsRequestId, context.getRemainingTimeInMillis());
 * });
 * await handler(signedLambdaEvent(testEvent('call.missed'), { secret }), testLambdaContext({ timeoutMs: 10_000 }));
 * ```
 */
export function testLambdaContext(options: TestLambdaContextOptions = {}): TestLambdaContext {
  checkOptionsObject('testLambdaContext', options);
  const { functionName = 'webhooks', awsRequestId = randomUUID(), timeoutMs = 3_000, now = Date.now } = options;
  checkDuration('timeoutMs', timeoutMs);
  checkCallback('now', now);
  const deadline = now() + timeoutMs;
  const unsupported = (name: string) => (): never => {
    throw new Error(`svc-webhooks: context.${name}() is not supported by testLambdaContext(); answer from an async handler`);
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '128',
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `2023/11/14/[$LATEST]${awsRequestId.replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
}
