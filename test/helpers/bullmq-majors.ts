/**
 * BullMQ 6 (`bullmq`) and 5 (`bullmq5`, the npm alias), side by side, for
 * specs that run on both; queues with names no other test uses, on the
 * Redis the suites share, removed with everything in them when closed.
 */
import { randomBytes } from 'node:crypto';
import * as bullmq6 from 'bullmq';
import * as bullmq5 from 'bullmq5';
import type { BullMQClasses, JobQueue } from '../../src/queues/bullmq/index.js';

/** What a spec needs of one major: its classes, typed as the entry takes them. */
export interface BullMQMajor {
  readonly name: string;
  /** The classes `work` takes as `bullmq`. */
  readonly classes: BullMQClasses;
  /** A queue named `name` on the Redis at `url`, with more of ioredis' options if given. */
  queue(name: string, url: string, redisOptions?: Record<string, unknown>): TestQueue;
  /** A queue named `name` with BullMQ's queue options as given: a cluster's connection, a prefix. */
  queueWith(name: string, options: { connection: unknown; prefix?: string }): TestQueue;
}

/** The part of a BullMQ `Queue` the specs use, the same in both majors. */
export interface TestQueue extends JobQueue {
  readonly name: string;
  getJob(id: string): Promise<TestJob | undefined>;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
  /** The jobs in the given states, every one of them by default. */
  getJobs(types: string[], start?: number, end?: number): Promise<TestJob[]>;
  obliterate(options: { force: boolean }): Promise<void>;
  /** The workers connected to the queue, as Redis lists its clients. */
  getWorkers(): Promise<unknown[]>;
  close(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** The part of a BullMQ `Job` the specs read. */
export interface TestJob {
  readonly id?: string;
  readonly name: string;
  readonly data: unknown;
  readonly returnvalue: unknown;
  readonly failedReason: string;
  /** The stack of the error each failed attempt threw, oldest first. */
  readonly stacktrace: string[];
  readonly attemptsMade: number;
  /** The delay of its last move to the delayed set, in ms. */
  readonly delay: number;
  getState(): Promise<string>;
  retry(): Promise<void>;
  remove(): Promise<void>;
  waitUntilFinished(events: unknown, ttl?: number): Promise<unknown>;
}

/** BullMQ's connection options for the Redis at `url`. */
export function connectionTo(url: string): { host: string; port: number } {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port || 6379) };
}

/** A queue name no other test uses. */
export function uniqueQueueName(label: string): string {
  return `svc-webhooks-test-${label}-${randomBytes(6).toString('hex')}`;
}

// Through unknown: each major's classes have their own generics, and the entry types them with BullMQ 6's.
type QueueClass = new (name: string, options: { connection: unknown; prefix?: string }) => TestQueue;
const major = (name: string, module: typeof bullmq6 | typeof bullmq5): BullMQMajor => {
  const queueWith = (queueName: string, options: { connection: unknown; prefix?: string }): TestQueue =>
    new (module.Queue as unknown as QueueClass)(queueName, options);
  return {
    name,
    classes: { Worker: module.Worker, DelayedError: module.DelayedError } as unknown as BullMQClasses,
    queue: (queueName, url, redisOptions = {}) => queueWith(queueName, { connection: { ...connectionTo(url), ...redisOptions } }),
    queueWith,
  };
};

export const BULLMQ_MAJORS: readonly BullMQMajor[] = [major('BullMQ 6', bullmq6), major('BullMQ 5', bullmq5)];

/** Removes the queue and all it holds, then closes it. */
export async function dropQueue(queue: TestQueue): Promise<void> {
  await queue.obliterate({ force: true });
  await queue.close();
}
