/**
 * The line `svc-webhooks dev` prints for each delivery once the receiver has
 * answered, as `stripe listen` does: time, number, type, id, the relay's
 * verdict, the receiver's status and outcome, milliseconds. The type, the id
 * and all the receiver wrote come from outside: escaped and cut short.
 */
import { printable } from '../../base/printable.js';
import type { DeliveryRecord } from './delivery-log.js';

/** The most characters of a type, an id or a receiver's word the line shows: an id of the service's form is 30. */
const MAX_FIELD_CHARS = 64;

const shown = (text: string): string => printable(text, MAX_FIELD_CHARS);

/**
 * `14:03:11  #3  call.missed       msg_01JD…  relay: valid  receiver: 204 processed  12 ms`; a replay and a
 * send from the page say so after the number.
 */
export function deliveryLine(record: DeliveryRecord): string {
  const { n, receivedAt, source, replayOf, mode, event, verdict, answer } = record;
  const time = new Date(receivedAt).toTimeString().slice(0, 8);
  const origin = source === 'replay' ? ` (replay of #${replayOf}, ${mode})` : source === 'send' ? ' (sent from the page)' : '';
  const type = event === undefined ? '(no envelope)' : shown(event.type);
  const id = event === undefined ? '-' : shown(event.id);
  const relay = verdict.valid ? 'valid' : shown(verdict.code ?? 'invalid');
  const receiver =
    answer.status === undefined ? shown(answer.failure ?? 'no answer') : `${answer.status}${answer.outcome === undefined ? '' : ` ${shown(answer.outcome.outcome)}`}`;
  return `${time}  #${n}${origin}  ${type.padEnd(16)}  ${id}  relay: ${relay}  receiver: ${receiver}  ${answer.latencyMs} ms`;
}
