/**
 * The framework majors the adapters support, each installed under its own
 * name (`express4`, `fastify4` are npm aliases), for tests to run on all.
 */
import express from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import Fastify4 from 'fastify4';

/** Express 5 and 4; both typed with Express 5's types, which the adapter is compiled against. */
export const EXPRESS_MAJORS: ReadonlyArray<readonly [string, typeof express]> = [
  ['express 5', express],
  ['express 4', express4],
];

/** Fastify 5 and 4; both typed as Fastify 5, whose types the adapter is compiled against. */
export const FASTIFY_MAJORS: ReadonlyArray<readonly [string, typeof Fastify]> = [
  ['fastify 5', Fastify],
  ['fastify 4', Fastify4 as unknown as typeof Fastify],
];
