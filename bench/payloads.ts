/** Realistic event envelopes of about a given size, for the benchmarks. */

/** A `message.received` envelope of about `bytes` bytes: a conversation thread, not one long string. */
export function envelopeOfSize(id: string, bytes: number): string {
  const thread: object[] = [];
  const envelope = {
    id,
    type: 'message.received',
    timestamp: '2026-11-20T14:05:02Z',
    data: {
      object: {
        id: 'sms_01JD2W6QZT3M9K2D8F4B6N1C5R',
        from: '+16475550142',
        to: '+14155550199',
        text: 'Can you call me back after 3pm? Thanks!',
        media_urls: [],
      },
      thread,
    },
  };
  for (let i = 0; JSON.stringify(envelope).length < bytes; i++) {
    thread.push({
      id: `sms_01JD2W6QZT3M9K2D8F4B6N${String(i).padStart(4, '0')}`,
      direction: i % 2 === 0 ? 'inbound' : 'outbound',
      text: `Message ${i} about the delivery window on Friday.`,
      sent_at: `2026-11-20T13:${String(i % 60).padStart(2, '0')}:00Z`,
    });
  }
  return JSON.stringify(envelope);
}

const ID_PLACEHOLDER = 'evt_000000000000000000000000';
const KIB_TEMPLATE = envelopeOfSize(ID_PLACEHOLDER, 1024);

/** A 1 KiB envelope with `id`, an id of 28 characters as `numberedId`'s, so that every body has one size. */
export function kibEnvelope(id: string): string {
  return KIB_TEMPLATE.replace(ID_PLACEHOLDER, id);
}

/** The `i`th event id of a run: `evt_` and `i` in 24 digits. */
export const numberedId = (i: number): string => `evt_${String(i).padStart(24, '0')}`;
