/**
 * Where a value failed its schema, read from schemasafe's instanceLocation
 * in the value itself: schemasafe neither percent-encodes a key nor escapes
 * its "/", so the location alone cannot say which keys it names.
 */
import { describe, expect, it } from 'vitest';
import { pathOf } from '../../../src/cli/shared/validator.js';

describe('the path of a failure', () => {
  it('takes each part of the location as a key, and the root as no key', () => {
    expect(pathOf('#', {})).toEqual([]);
    expect(pathOf('#/data/object/0/id', { data: { object: [{ id: 1 }] } })).toEqual(['data', 'object', '0', 'id']);
    // A key the value lacks (a required one) is still named.
    expect(pathOf('#/data/missing/deeper', { data: {} })).toEqual(['data', 'missing', 'deeper']);
    expect(pathOf('#/', { '': 1 })).toEqual(['']);
  });

  it('goes on past a null or a value that is no object, naming the rest of the location', () => {
    expect(pathOf('#/a/b/c', { a: null })).toEqual(['a', 'b', 'c']);
    expect(pathOf('#/a/b', { a: 'text' })).toEqual(['a', 'b']);
  });

  it('never decodes "%": a key is as the value writes it', () => {
    expect(pathOf('#/labels/50%', { labels: { '50%': 1 } })).toEqual(['labels', '50%']);
    expect(pathOf('#/labels/%41', { labels: { '%41': 1 } })).toEqual(['labels', '%41']);
  });

  it('reads a key holding "/" as one, the longest key of the value first', () => {
    expect(pathOf('#/a/b/c', { 'a/b': { c: 1 } })).toEqual(['a/b', 'c']);
    expect(pathOf('#/a/b/c', { a: { b: { c: 1 } } })).toEqual(['a', 'b', 'c']);
    expect(pathOf('#/a/b/c', { a: { 'b/c': 1 }, 'a/b/c': 2 })).toEqual(['a/b/c']);
    expect(pathOf('#/x/a/b', { x: { 'a/b': 1, a: { b: 2 } } })).toEqual(['x', 'a/b']);
    // A key with "/" beside them does not make the parts one key.
    expect(pathOf('#/a/b/c', { 'x/y': 1, a: { b: { c: 1 } } })).toEqual(['a', 'b', 'c']);
    expect(pathOf('#/a/b/c', { 'x/y/z': 1, 'a/b': { c: 1 } })).toEqual(['a/b', 'c']);
  });

  it("reads each object's keys once per map, and joins no more parts than its keys hold", () => {
    const looked: string[] = [];
    let listed = 0;
    const object = new Proxy(
      { 'a/b': 1, c: { d: 1 } },
      {
        ownKeys: (target) => (listed += 1, Reflect.ownKeys(target)),
        getOwnPropertyDescriptor: (target, key) => (looked.push(String(key)), Reflect.getOwnPropertyDescriptor(target, key)),
      },
    );
    const slashes = new WeakMap<object, number>();
    expect(pathOf('#/c/d/e', object, slashes)).toEqual(['c', 'd', 'e']);
    // Its keys hold one "/" at most: runs of two parts, never three.
    expect(looked).toContain('c/d');
    expect(looked).not.toContain('c/d/e');
    expect(pathOf('#/a/b', object, slashes)).toEqual(['a/b']);
    expect(listed).toBe(1);
  });

  it('unescapes "~1" and "~0" only where the value has no key written so', () => {
    // schemasafe escapes a key only when it holds "~/".
    expect(pathOf('#/x~0~1y', { 'x~/y': 1 })).toEqual(['x~/y']);
    expect(pathOf('#/x~1', { 'x~1': 1 })).toEqual(['x~1']);
    expect(pathOf('#/x~1', {})).toEqual(['x/']);
  });
});
