/**
 * svc-webhooks/bullmq: slow work on a BullMQ queue (Redis, Redis Cluster),
 * each event processed once. `enqueue(queue)` is a receiver's `handoff`: it
 * adds one job per delivery, keyed on its `dedupKey`, and the receiver
 * answers 202 in milliseconds. `work(queueName, { on, dedup: { store }, worker: { connection } })`
 * runs the typed handlers of each job under a lease on the event in a dedup
 * store, so a stalled job, a job queued again or two copies run a handler
 * that succeeded only once. BullMQ (5 or 6) is an optional peer: this entry
 * imports its types only and loads its classes when a worker is created.
 * @packageDocumentation
 */
export { enqueue, type BullMQJobOptions, type BullMQEnqueueOptions, type JobQueue } from './enqueue.js';
export { jobIdOf } from './job-id.js';
export type { BullMQJobResult } from './job-processor.js';
export { work, type BullMQClasses, type BullMQWorker, type BullMQWorkerOptions, type WorkerDedupOptions } from './work.js';
