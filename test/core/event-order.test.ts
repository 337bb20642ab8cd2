import { describe, expect, it } from 'vitest';
import { checkOrdering, eventOrder, staleDelivery, versionNumber } from '../../src/core/event-order.js';
import { WebhookDedupError } from '../../src/core/errors.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';
import { deliveryOf } from '../helpers/signed-request.js';

describe('versionNumber', () => {
  it('takes finite numbers and valid Dates as they are, in milliseconds', () => {
    expect(versionNumber(42)).toBe(42);
    expect(versionNumber(-1.5)).toBe(-1.5);
    expect(versionNumber(new Date(Date.UTC(2026, 10, 29)))).toBe(Date.UTC(2026, 10, 29));
    for (const bad of [NaN, Infinity, -Infinity, new Date('nope'), null, true, {}, 10n, ['2026-11-29T00:00:00Z']]) expect(versionNumber(bad)).toBeUndefined();
  });

  it('reads an RFC 3339 string by the instant it names, zones and fractions included, to the microsecond', () => {
    const noon = Date.UTC(2026, 10, 29, 12);
    expect(versionNumber('2026-11-29T12:00:00Z')).toBe(noon);
    expect(versionNumber('2026-11-29t12:00:00z')).toBe(noon);
    expect(versionNumber('2026-11-29T13:30:00+01:30')).toBe(noon);
    expect(versionNumber('2026-11-29T12:00:00.5Z')).toBe(noon + 500);
    expect(versionNumber('2026-11-29T12:00:00.123Z')).toBe(noon + 123);
    expect(versionNumber('2026-11-29T12:00:00.123456Z')).toBeCloseTo(noon + 123.456, 3);
    expect(versionNumber('2026-11-29T12:00:00.123457Z')! > versionNumber('2026-11-29T12:00:00.123456Z')!).toBe(true);
    expect(versionNumber('2026-11-29T12:00:00.123456789Z')! > versionNumber('2026-11-29T12:00:00.123Z')!).toBe(true);
    // As instants, not as text: 11:00 in UTC is later than 12:00 at +02:00.
    expect(versionNumber('2026-11-29T11:00:00Z')! > versionNumber('2026-11-29T12:00:00+02:00')!).toBe(true);
  });

  it('refuses what is no RFC 3339 time', () => {
    for (const bad of ['', 'yesterday', '2026-11-29', '2026-11-29T12:00:00', '2026-11-29 12:00:00Z', '2026-11-29T12:00Z', '2026-11-29T12:00:00.Z', '2026-11-29T12:00:00.1234567890Z', '2026-13-01T00:00:00Z', ' 2026-11-29T12:00:00Z', '2026-11-29T12:00:00Z ', '1732881600']) {
      expect(versionNumber(bad), bad).toBeUndefined();
    }
  });
});

describe('eventOrder', () => {
  const ordering = checkOrdering({ version: (event: { timestamp?: unknown }) => event.timestamp })!;
  const delivery = (timestamp: unknown) => {
    const base = deliveryOf({ id: 'evt_1' });
    return { ...base, event: { ...base.event, timestamp } };
  };

  it("keys an event by its object's id, scoped by the secret as its dedup key is", () => {
    const { dedupKey } = deliveryOf({ id: 'evt_1' });
    expect(eventOrder(ordering, delivery('2026-11-29T12:00:00Z'))).toEqual({ key: `${dedupKey.slice(0, 17)}obj_evt_1`, version: Date.UTC(2026, 10, 29, 12) });
    expect(dedupKey[16]).toBe(':');
  });

  it('leaves an event unordered when its key or version is undefined', () => {
    expect(eventOrder(ordering, delivery(undefined))).toBeUndefined();
    const keyless = checkOrdering({ key: () => undefined, version: () => 1 })!;
    expect(eventOrder(keyless, delivery(1))).toBeUndefined();
  });

  it('throws invalid_event_order, what was thrown its cause, for a function that throws or answers what cannot order', () => {
    const bad = checkOrdering({ version: () => 'soon' })!;
    expect(() => eventOrder(bad, delivery(1))).toThrow(
      expect.objectContaining({
        message: 'the ordering key or version of this event could not be read; retry later',
        cause: new TypeError('ordering.key must answer a non-empty string and ordering.version a finite number, a valid Date or an RFC 3339 time'),
      }),
    );
    const thrown = new Error('no field');
    const throwing = checkOrdering({ version: () => { throw thrown; } })!;
    expect(() => eventOrder(throwing, delivery(1))).toThrow(expect.objectContaining({ code: 'invalid_event_order', cause: thrown }));
    for (const [key, version] of [[() => '', () => 1], [() => 7, () => 1], [undefined, () => 'soon'], [undefined, () => NaN]] as const) {
      const bad = checkOrdering({ ...(key !== undefined && { key }), version })!;
      expect(() => eventOrder(bad, delivery(1))).toThrow(WebhookDedupError);
    }
  });
});

describe('checkOrdering', () => {
  it("defaults staleEvents to 'skip' and the key to the object's id; undefined is no ordering", () => {
    expect(checkOrdering(undefined)).toBeUndefined();
    const checked = checkOrdering({ version: () => 1 })!;
    expect(checked.staleEvents).toBe('skip');
    expect(checked.key(deliveryOf().event)).toBe('obj_evt_1');
  });

  it('throws WebhookOptionsError for no version function, a key that is no function, an unknown policy, no object', () => {
    expect(() => checkOrdering({})).toThrow(new WebhookOptionsError('svc-webhooks: ordering.version is required: a function from the event to its version, e.g. (event) => event.timestamp'));
    expect(() => checkOrdering({ version: () => 1, key: 'id' })).toThrow(new WebhookOptionsError('svc-webhooks: ordering.key must be a function'));
    expect(() => checkOrdering({ version: () => 1, staleEvents: 'drop' })).toThrow(new WebhookOptionsError("svc-webhooks: ordering.staleEvents must be 'skip' or 'run'"));
    expect(() => checkOrdering('timestamp')).toThrow(new WebhookOptionsError('svc-webhooks: ordering options must be an object'));
    expect(() => checkOrdering({ version: 'timestamp' })).toThrow(WebhookOptionsError);
  });
});

describe('staleDelivery', () => {
  it('marks a copy stale and leaves the delivery as it was', () => {
    const delivery = deliveryOf();
    expect(staleDelivery(delivery)).toEqual({ ...delivery, stale: true });
    expect(delivery.stale).toBeUndefined();
  });
});
