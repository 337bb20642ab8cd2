/**
 * svc-webhooks/bullmq: slow work on a BullMQ queue (Redis, Redis Cluster),
 * each event processed once. `enqueue(queue)` is a receiver's `handoff`: it
 * adds one job per event, keyed on the event, and the receiver answers 202
 * in milliseconds. `createWorker(queueName, { on, dedup, connection })` runs
 * the typed handlers of each job under a lease on the event in a dedup
 * store, so a stalled job, a job queued again or two copies run a handler
 * that succeeded only once. BullMQ (5 or 6) is an optional peer: this entry
 * imports its types only and loads its classes when a worker is created.
 */
export { createWorker, type BullMQClasses, type WebhookWorker, type WebhookWorkerOptions } from './create-worker.js';
export { enqueue, type EnqueueJobOptions, type EnqueueOptions, type JobQueue } from './enqueue.js';
export { eventKey } from '../../receive/event-key.js';
export { jobIdOf } from './job-id.js';
export type { WebhookJobResult } from './job-processor.js';
export type { QueuedEvent } from '../queued-event.js';
