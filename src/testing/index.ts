/**
 * svc-webhooks/testing: test a receiver without the service. Typed test
 * events, requests and headers signed as the service signs them, and
 * `simulateDelivery`, which delivers as the service does (retries under the
 * same id, copies at once, a 10 s cut-off). No runtime dependency; works
 * under vitest, jest and node:test.
 * @packageDocumentation
 */
export { testEvent, type TestEventOptions, type TestEventOverrides } from './test-event.js';
export { signedHeaders, signedRequest, type SignedHeadersOptions, type SignedRequestOptions } from './signed-request.js';
export { simulateDelivery, type SimulateDeliveryOptions, type SimulatedAttempt, type SimulatedDelivery } from './simulate-delivery.js';
export type { DeliveryTarget } from './delivery.js';
