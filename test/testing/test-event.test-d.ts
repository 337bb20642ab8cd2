/** testEvent is typed per event type, and a misspelled type does not compile. */
import { expectTypeOf, test } from 'vitest';
import type { CallMissedEvent, MessageReceivedEvent } from '../../src/index.js';
import { testEvent } from '../../src/testing/index.js';

test('testEvent types its result as the event of its type', () => {
  expectTypeOf(testEvent('call.missed')).toEqualTypeOf<CallMissedEvent>();
  expectTypeOf(testEvent('message.received', { data: { object: { id: 'msg_1' } } })).toEqualTypeOf<MessageReceivedEvent>();
  // @ts-expect-error a misspelled type is no known event type
  testEvent('call.mised');
  // @ts-expect-error an override must have the event's shape
  testEvent('call.missed', { type: 'message.received' });
});
