/** The delivery channel heard from a test: each delivery's trace once it is answered. */
import { tracingChannel } from 'node:diagnostics_channel';
import { DELIVERY_CHANNEL, type DeliveryTrace } from '../../src/index.js';

/** The traces heard so far, and a way to stop listening. */
export interface HeardDeliveries {
  readonly traces: DeliveryTrace[];
  stop(): void;
}

/** Listens on the delivery channel: each trace as it is at asyncEnd, its own fields alone. */
export function hearDeliveries(): HeardDeliveries {
  const traces: DeliveryTrace[] = [];
  const none = (): void => undefined;
  const channel = tracingChannel(DELIVERY_CHANNEL);
  // The context also carries tracePromise's own result: keep the trace's fields.
  const asyncEnd = (message: unknown): void => {
    const { entry, delivery, status, outcome, skewMs } = message as DeliveryTrace;
    traces.push({ entry, delivery, status, outcome, skewMs });
  };
  const handlers = { start: none, end: none, asyncStart: none, asyncEnd, error: none };
  channel.subscribe(handlers);
  return { traces, stop: () => channel.unsubscribe(handlers) };
}
