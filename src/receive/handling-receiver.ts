/**
 * The receiver the middleware adapters build. Without `on` it is
 * `createReceiver`'s: a verified delivery goes to the route. With `on` it
 * answers every request itself: it runs the handler of the event's type under
 * the dedup claim and hands the adapter the answer as `action: 'respond'`, a
 * refusal with its error, so the adapter's `onError` takes over these
 * refusals too.
 */
import { answerUnderClaim } from './answer-under-claim.js';
import { createDispatcher } from './dispatch.js';
import type { EventSchemas, HandlerOptions } from './event-handlers.js';
import { createReceiver, type Receiver, type ReceiverOptions } from './receiver.js';

/** Checks the receiver and handler options once; throws `TypeError`. */
export function createHandlingReceiver<S extends EventSchemas>(options: ReceiverOptions & HandlerOptions<S>): Receiver {
  const receiver = createReceiver(options);
  const dispatcher = createDispatcher(options);
  if (dispatcher === undefined) return receiver;
  return {
    maxPayloadBytes: receiver.maxPayloadBytes,
    bodyTimeoutMs: receiver.bodyTimeoutMs,
    async receive(payload, headers) {
      const reception = await receiver.receive(payload, headers);
      if (reception.action === 'respond') return reception;
      const { error, ...response } = await answerUnderClaim(reception, ({ event }) => dispatcher.dispatch(event), ({ status }) => status);
      return { action: 'respond', response, error };
    },
  };
}
