/**
 * An invocation context of Azure Functions' v4 programming model for tests:
 * the members of `@azure/functions`' `InvocationContext`, its log methods
 * going to a log handler as that class's do, built without loading that
 * package.
 */
import { randomUUID } from 'node:crypto';
import { checkCallback, checkOptionsObject } from '../base/option-checks.js';

/** An invocation's context, with the members of `@azure/functions`' `InvocationContext`. */
export interface TestAzureContext {
  /** The invocation's id. */
  invocationId: string;
  /** The function's name. */
  functionName: string;
  /** The invocation's extra inputs, by name: none until set. */
  extraInputs: {
    /** The input of that name (or of that input's `name`). */
    get(inputOrName: string | { readonly name: string }): unknown;
    /** Sets the input of that name (or of that input's `name`). */
    set(inputOrName: string | { readonly name: string }, value: unknown): void;
  };
  /** The invocation's extra outputs, by name: none until set. */
  extraOutputs: {
    /** The output of that name (or of that output's `name`). */
    get(outputOrName: string | { readonly name: string }): unknown;
    /** Sets the output of that name (or of that output's `name`). */
    set(outputOrName: string | { readonly name: string }, value: unknown): void;
  };
  /** Logs at level `information`. */
  log(...args: unknown[]): void;
  /** Logs at level `trace`. */
  trace(...args: unknown[]): void;
  /** Logs at level `debug`. */
  debug(...args: unknown[]): void;
  /** Logs at level `information`. */
  info(...args: unknown[]): void;
  /** Logs at level `warning`. */
  warn(...args: unknown[]): void;
  /** Logs at level `error`. */
  error(...args: unknown[]): void;
  /** The function's trigger and bindings: an HTTP trigger, no others. */
  options: {
    /** The HTTP trigger. */
    trigger: {
      /** `httpTrigger`. */
      type: string;
      /** The trigger's name. */
      name: string;
    };
    /** The extra inputs: none. */
    extraInputs: Array<{
      /** The binding's type. */
      type: string;
      /** The binding's name. */
      name: string;
    }>;
    /** The extra outputs: none. */
    extraOutputs: Array<{
      /** The binding's type. */
      type: string;
      /** The binding's name. */
      name: string;
    }>;
  };
}

/** Options of `testAzureContext()`. */
export interface TestAzureContextOptions {
  /**
   * The invocation's id.
   * @default a fresh UUID
   */
  readonly invocationId?: string;
  /**
   * The function's name.
   * @default 'webhooks'
   */
  readonly functionName?: string;
  /**
   * Where the context's log methods go, with Azure's level names, as the
   * `logHandler` of Azure's own `InvocationContext`.
   * @default the console, as Azure's own class logs: `console.info` for `information`, `console.warn` for `warning`, …
   */
  readonly logHandler?: (level: 'trace' | 'debug' | 'information' | 'warning' | 'error', ...args: unknown[]) => void;
}

/**
 * An Azure Functions invocation context, to call an Azure handler with in a
 * test: a fresh `invocationId` unless given, and the log methods going to
 * `logHandler`.
 * @example
 * ```ts
 * import { verifyWebhook } from 'svc-webhooks/azure';
 * import { signedAzureRequest, testAzureContext, testEvent } from 'svc-webhooks/testing';
 *
 * const secret = 'whsec_c2VjcmV0LWZvci10ZXN0cw==';
 * const handler = verifyWebhook({ secret }, async (event, { context }) => context.log('got', event.id));
 * const logged: unknown[][] = [];
 * await handler(signedAzureRequest(testEvent('call.missed'), { secret }), testAzureContext({ logHandler: (_level, ...args) => logged.push(args) }));
 * ```
 */
export function testAzureContext(options: TestAzureContextOptions = {}): TestAzureContext {
  checkOptionsObject('testAzureContext', options);
  const { invocationId = randomUUID(), functionName = 'webhooks', logHandler = consoleLog } = options;
  checkCallback('logHandler', logHandler);
  return {
    invocationId,
    functionName,
    extraInputs: bindings(),
    extraOutputs: bindings(),
    log: (...args) => logHandler('information', ...args),
    trace: (...args) => logHandler('trace', ...args),
    debug: (...args) => logHandler('debug', ...args),
    info: (...args) => logHandler('information', ...args),
    warn: (...args) => logHandler('warning', ...args),
    error: (...args) => logHandler('error', ...args),
    options: { trigger: { type: 'httpTrigger', name: 'httpTrigger1' }, extraInputs: [], extraOutputs: [] },
  };
}

/** Values by binding name, as Azure's class keeps its extra inputs and outputs. */
function bindings(): TestAzureContext['extraInputs'] {
  const values = new Map<string, unknown>();
  const nameOf = (binding: string | { readonly name: string }): string => (typeof binding === 'string' ? binding : binding.name);
  return {
    get: (binding) => values.get(nameOf(binding)),
    set: (binding, value) => void values.set(nameOf(binding), value),
  };
}

/** Azure's own default: the console method of the level. */
function consoleLog(level: 'trace' | 'debug' | 'information' | 'warning' | 'error', ...args: unknown[]): void {
  const write = { trace: console.trace, debug: console.debug, information: console.info, warning: console.warn, error: console.error }[level];
  write(...args);
}
