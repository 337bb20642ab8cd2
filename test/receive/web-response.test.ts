/** Knowing a Fetch Response by its shape, and adding the headers a refusal needs to one. */
import { describe, expect, it } from 'vitest';
import { isResponse, withMissingHeaders } from '../../src/receive/web-response.js';

describe('isResponse', () => {
  it('knows a Response, and an object shaped like one from another realm', () => {
    expect(isResponse(new Response('x', { status: 418 }))).toBe(true);
    expect(isResponse(Response.json({ ok: true }))).toBe(true);
    expect(isResponse({ status: 200, headers: new Headers() })).toBe(true);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 200],
    ['a function', Object.assign(() => undefined, { status: 200, headers: new Headers() })],
    ['an object without a status', { headers: new Headers() }],
    ['a status that is no number', { status: '200', headers: new Headers() }],
    ['an object without headers', { status: 200 }],
    ['headers that are null', { status: 200, headers: null }],
    ['headers that are a string', { status: 200, headers: 'content-type: text/plain' }],
    ['headers without has', { status: 200, headers: { 'content-type': 'text/plain' } }],
    ['headers whose has is no function', { status: 200, headers: { has: true } }],
  ])('refuses %s', (_name, value) => {
    expect(isResponse(value)).toBe(false);
  });
});

describe('withMissingHeaders', () => {
  it('answers the same Response when it has every header already', () => {
    const response = new Response('busy', { status: 409, headers: { 'Retry-After': '120' } });
    expect(withMissingHeaders(response, { 'retry-after': '60' })).toBe(response);
    expect(withMissingHeaders(response, {})).toBe(response);
  });

  it('adds only the headers it lacks, keeping its status, its own headers and its body', async () => {
    const response = new Response('busy', { status: 409, headers: { 'retry-after': '120', 'x-own': 'kept' } });
    const answer = withMissingHeaders(response, { 'retry-after': '60', connection: 'close' });
    expect(answer.status).toBe(409);
    expect(Object.fromEntries(answer.headers)).toEqual({
      'retry-after': '120',
      'x-own': 'kept',
      connection: 'close',
      'content-type': 'text/plain;charset=UTF-8',
    });
    expect(await answer.text()).toBe('busy');
  });

  it('adds them to a Response whose headers cannot change', () => {
    const response = Response.redirect('https://example.com/elsewhere', 307);
    expect(() => response.headers.set('retry-after', '60')).toThrow(TypeError);
    const answer = withMissingHeaders(response, { 'retry-after': '60' });
    expect(answer.status).toBe(307);
    expect(answer.headers.get('retry-after')).toBe('60');
    expect(answer.headers.get('location')).toBe('https://example.com/elsewhere');
  });
});
