/** The job id of an event: readable where BullMQ allows, escaped where it refuses, never shared by two keys. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jobIdOf } from '../../../src/queues/bullmq/index.js';
import { WebhookOptionsError } from '../../../src/base/options-error.js';

/** What BullMQ refuses as a custom job id (BullMQ 5 and 6 alike): an integer, or a `:`. */
const refusedByBullMQ = (id: string): boolean => `${Number.parseInt(id, 10)}` === id || id.includes(':');

describe('jobIdOf', () => {
  it.each([
    ['msg_2Kx', 'msg_2Kx'],
    ['a1B2c3D4e5F6g7H8:msg_2Kx', 'a1B2c3D4e5F6g7H8%3Amsg_2Kx'],
    ['a1B2c3D4e5F6g7H8:a:b', 'a1B2c3D4e5F6g7H8%3Aa%3Ab'],
    ['12', '%312'],
    ['-7', '%2D7'],
    ['007', '007'],
    ['100%', '100%25'],
  ])('writes %j as %j', (dedupKey, expected) => {
    expect(jobIdOf(dedupKey)).toBe(expected);
  });

  it('gives an id BullMQ takes, from which percent-decoding gives the dedup key back', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: 'grapheme' }), (dedupKey) => {
        const jobId = jobIdOf(dedupKey);
        expect(refusedByBullMQ(jobId)).toBe(false);
        expect(decodeURIComponent(jobId)).toBe(dedupKey);
      }),
    );
  });

  it('refuses an empty key, or one that is no string, with a TypeError', () => {
    expect(() => jobIdOf('')).toThrow(new WebhookOptionsError('svc-webhooks: a dedup key must be a non-empty string'));
    expect(() => jobIdOf(42 as never)).toThrow(new WebhookOptionsError('svc-webhooks: a dedup key must be a non-empty string'));
  });
});
