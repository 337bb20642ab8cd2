/**
 * What runs for each delivery, said once: exactly one of on, handoff and the
 * entry's own (a handler, or a middleware's route), refused at creation with
 * one message whatever the entry, and what each runs and answers.
 */
import { describe, expect, it, vi } from 'vitest';
import { createPipeline, type PipelineOptions } from '../../src/receive/pipeline.js';
import type { SingleEndpoint } from '../../src/receive/receiver.js';
import type { WebhookResponse } from '../../src/receive/responses.js';
import { whatRuns, type EntryRunner, type SingleHandler } from '../../src/receive/what-runs.js';
import { decidedAnswers } from '../helpers/decided-answers.js';
import { deliveryOf, now, SECRET, signedRequest, type SignedRequest } from '../helpers/signed-request.js';
import { WebhookOptionsError } from '../../src/base/options-error.js';

const handler = (): void => undefined;
const handoff = { hand: async () => undefined };
const route = { route: async () => 204 };
/** A single handler as the Fetch and Lambda entries bring one: answers are numbers here. */
const single = (fn: unknown): SingleHandler<SignedRequest, number> => ({
  handler: fn,
  shape: { isAnswer: (value): value is number => typeof value === 'number', described: 'a number', statusOf: (answer) => answer },
  context: (_request, delivery) => delivery,
});

const MIDDLEWARE = 'on and handoff (or neither: the route after the middleware answers)';
const HANDLER_ENTRY = 'on, handoff and a handler function';
const message = (choices: string, given: string) => `svc-webhooks: say what runs for each delivery with exactly one of ${choices}; given: ${given}`;

describe('whatRuns', () => {
  it.each([
    ['on and handoff to a middleware', { on: {}, handoff }, route, message(MIDDLEWARE, 'on and handoff')],
    ['on and handoff to a handler entry', { on: {}, handoff }, single(undefined), message(HANDLER_ENTRY, 'on and handoff')],
    ['on and a handler', { on: {} }, single(handler), message(HANDLER_ENTRY, 'on and a handler')],
    ['handoff and a handler', { handoff }, single(handler), message(HANDLER_ENTRY, 'handoff and a handler')],
    ['all three', { on: {}, handoff }, single(handler), message(HANDLER_ENTRY, 'on and handoff and a handler')],
    ['nothing to a handler entry', {}, single(undefined), message(HANDLER_ENTRY, 'none')],
    ['nothing where nothing is brought (Fastify at a path)', {}, undefined, message('on and handoff', 'none')],
  ])('refuses %s with one message', (_name, options, runner, says) => {
    expect(() => whatRuns(options, runner as EntryRunner<SignedRequest, number> | undefined)).toThrow(new WebhookOptionsError(says));
  });

  it.each([
    ['schemas', { schemas: {} }, 'schemas takes effect only with on'],
    ['unknownEvents', { unknownEvents: 'reject' }, 'unknownEvents takes effect only with on'],
    ['onUnknownEvent', { onUnknownEvent: handler }, 'onUnknownEvent takes effect only with on'],
  ] as const)('refuses %s without on, with a handoff, a handler or a route alike', (_name, options, says) => {
    for (const [given, runner] of [
      [{ handoff }, undefined],
      [{}, single(handler)],
      [{}, route],
    ] as const) {
      expect(() => whatRuns({ ...given, ...options }, runner)).toThrow(new WebhookOptionsError(`svc-webhooks: ${says}`));
    }
  });

  it('refuses onHandlerError where only a route runs, and takes it with on, handoff or a handler', () => {
    const onHandlerError = (): void => undefined;
    expect(() => whatRuns({ onHandlerError }, route)).toThrow(new WebhookOptionsError('svc-webhooks: onHandlerError takes effect only with on, handoff or a handler'));
    expect(() => whatRuns({ on: {}, onHandlerError }, route)).not.toThrow();
    expect(() => whatRuns({ handoff, onHandlerError }, route)).not.toThrow();
    expect(() => whatRuns({ onHandlerError }, single(handler))).not.toThrow();
  });

  it('refuses a handler that is no function, and a handoff without hand', () => {
    expect(() => whatRuns({}, single('respond'))).toThrow(new WebhookOptionsError('svc-webhooks: the handler must be a function'));
    expect(() => whatRuns({ handoff: {} }, route)).toThrow(
      new WebhookOptionsError('svc-webhooks: handoff must be what enqueue() returns: an object with a hand(delivery) method'),
    );
  });

  it('runs the route of a middleware given neither on nor handoff, and answers its status', async () => {
    const routed = vi.fn(async () => 202);
    const runs = whatRuns<SignedRequest, number>({}, { route: routed });
    const request = signedRequest();
    expect(await runs.run(request, deliveryOf())).toEqual({ kind: 'routed', status: 202 });
    expect(routed).toHaveBeenCalledExactlyOnceWith(request, deliveryOf());
    expect(runs.runsFor('call.answered')).toBe(true);
  });

  it("runs a single handler with the event and its entry's context, and takes its answer or 204 for nothing", async () => {
    const seen: unknown[][] = [];
    const runs = whatRuns<SignedRequest, number>({}, single((...args: unknown[]) => (seen.push(args), seen.length === 1 ? 201 : undefined)));
    expect(await runs.run(signedRequest(), deliveryOf())).toEqual({ kind: 'answered', answer: 201, status: 201 });
    expect(await runs.run(signedRequest(), deliveryOf())).toMatchObject({ kind: 'decided', response: { status: 204 }, outcome: 'processed' });
    expect(seen).toEqual([
      [deliveryOf().event, deliveryOf()],
      [deliveryOf().event, deliveryOf()],
    ]);
  });

  it('tells whether user code runs for a type: with on, only for types with a handler', () => {
    const runs = whatRuns({ on: { 'call.missed': handler } }, route);
    expect(runs.runsFor('call.missed')).toBe(true);
    expect(runs.runsFor('webhook.test')).toBe(false);
    expect(runs.runsFor('call.answered')).toBe(false);
    expect(whatRuns({ handoff }, undefined).runsFor('call.answered')).toBe(true);
  });
});

describe('what runs, through a pipeline', () => {
  const receiveWith = (options: Partial<PipelineOptions & SingleEndpoint>) =>
    createPipeline<SignedRequest, WebhookResponse>({ secret: SECRET, now, dedup: false, ...options }, decidedAnswers());

  it('refuses a wrong combination at creation, before any request', () => {
    expect(() => receiveWith({ on: {}, handoff })).toThrow(new WebhookOptionsError(message('on and handoff', 'on and handoff')));
    expect(() => receiveWith({})).toThrow(new WebhookOptionsError(message('on and handoff', 'none')));
  });

  it('answers 204 for a handled event, for one without a handler and for an unknown type accepted', async () => {
    const receive = receiveWith({ on: { 'call.missed': handler } });
    for (const type of ['call.missed', 'webhook.test', 'call.answered']) expect(await receive(signedRequest({ type }))).toMatchObject({ status: 204, body: undefined });
  });
});
