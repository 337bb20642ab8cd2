/**
 * svc-webhooks/testing: test a receiver without the service. Typed test
 * events, requests and headers signed as the service signs them, and
 * `simulateDelivery`, which delivers as the service does (retries under the
 * same id, copies at once, a 10 s cut-off, or an object's events shuffled to
 * check that its state ends as in order), to a URL, a Fetch handler, or a
 * Lambda or Azure Functions handler called in this process with the events,
 * requests and contexts of those platforms, which the kit also builds. No
 * runtime dependency; works under vitest, jest and node:test.
 * @packageDocumentation
 */
export { testEvent, type TestEventOptions, type TestEventOverrides } from './test-event.js';
export { signedHeaders, signedRequest, type SignedHeadersOptions, type SignedRequestOptions } from './signed-request.js';
export { simulateDelivery, type SimulateDeliveryOptions, type SimulatedAttempt, type SimulatedDelivery } from './simulate-delivery.js';
export type { OlderAfterNewer, SimulatedOrdering, SimulateOrderingOptions } from './ordering-scenario.js';
export type { DeliveryTarget } from './delivery.js';
export {
  signedLambdaEvent,
  type LambdaAlbEvent,
  type LambdaEventFormat,
  type LambdaEventOptions,
  type LambdaHttpApiEvent,
  type LambdaRestEvent,
  type SignedLambdaEventOptions,
} from './lambda-event.js';
export { testLambdaContext, type TestLambdaContext, type TestLambdaContextOptions } from './lambda-context.js';
export { signedAzureRequest, type AzureRequestOptions, type SignedAzureRequestOptions, type TestAzureRequest } from './azure-request.js';
export { testAzureContext, type TestAzureContext, type TestAzureContextOptions } from './azure-context.js';
export type { AzureDeliveryTarget, LambdaDeliveryTarget } from './in-process-targets.js';
