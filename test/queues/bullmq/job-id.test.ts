/** The job id of an event: readable where BullMQ allows, escaped where it refuses, never shared by two keys. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jobIdOf } from '../../../src/queues/bullmq/index.js';
import { eventKey } from '../../../src/receive/event-key.js';

/** What BullMQ refuses as a custom job id (BullMQ 5 and 6 alike): an integer, or a `:`. */
const refusedByBullMQ = (id: string): boolean => `${Number.parseInt(id, 10)}` === id || id.includes(':');

describe('jobIdOf', () => {
  it.each([
    ['msg_2Kx', undefined, 'msg_2Kx'],
    ['msg_2Kx', 'acme', 'acme%3Amsg_2Kx'],
    ['msg_2Kx', 'acme:eu', 'acme%253Aeu%3Amsg_2Kx'],
    ['12', undefined, '%312'],
    ['-7', undefined, '%2D7'],
    ['007', undefined, '007'],
    ['a:b', undefined, 'a%3Ab'],
    ['100%', undefined, '100%25'],
  ])('writes %j (tenant %j) as %j', (id, tenant, expected) => {
    expect(jobIdOf(id, tenant)).toBe(expected);
  });

  it('gives an id BullMQ takes, from which percent-decoding gives the dedup key back', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: 'grapheme' }), fc.option(fc.string({ unit: 'grapheme' }), { nil: undefined }), (id, tenant) => {
        const jobId = jobIdOf(id, tenant);
        expect(refusedByBullMQ(jobId)).toBe(false);
        expect(decodeURIComponent(jobId)).toBe(eventKey(id, tenant));
      }),
    );
  });

  it('refuses an empty id with a TypeError', () => {
    expect(() => jobIdOf('')).toThrow(new TypeError('svc-webhooks: an event id must be a non-empty string'));
  });
});
