/**
 * What the worker does with one message: claim its event in the dedup
 * store, run the event's handler under that claim, settle the claim by the
 * outcome, and ack or retry the message. An event done before, or stale
 * (`ordering`), is acked without running; an event another isolate holds,
 * or whose object another event holds, is retried later.
 */
import { writeLog, type WebhookLogger } from '../../base/logger.js';
import type { ClaimSettings } from '../../process/claim.js';
import { runClaimedJob } from '../claimed-job.js';
import type { Dispatcher } from '../../process/dispatcher.js';
import { runQueuedJob } from '../queue-traces.js';
import { isQueuedDelivery } from '../queued-delivery.js';
import type { QueueMessage } from './queue-types.js';

/** What a message's run needs besides the message: fixed per worker, but the claims, per batch. */
export interface MessageRun {
  readonly dispatcher: Dispatcher;
  readonly claims: ClaimSettings;
  readonly logger: WebhookLogger;
  /** The queue's name, from the batch. */
  readonly queue: string;
  /** How long a message whose event, or its object, another run holds waits before it is delivered again. */
  readonly busyDelaySeconds: number;
}

/**
 * Runs one message and acks or retries it: acked once its handler
 * succeeded or had succeeded before, or its event was skipped as stale;
 * retried at once (by the queue's own `retry_delay`) when the handler
 * failed, and after `busyDelaySeconds` when another run holds its event or
 * its object, or the store failed. A message that is no
 * queued delivery is retried, with one line to `logger`, so that it ends in
 * the dead-letter queue rather than lost. Never rejects.
 */
export async function runMessage(run: MessageRun, message: QueueMessage): Promise<void> {
  const { body } = message;
  if (!isQueuedDelivery(body)) {
    writeLog(
      run.logger,
      'error',
      { code: 'invalid_job', jobId: message.id },
      `the queue message ${message.id} holds no queued delivery (it was not sent by enqueue); it is retried, to end in the dead-letter queue`,
    );
    message.retry();
    return;
  }
  try {
    const settled = await runQueuedJob('cloudflare', run.queue, message.id, body, (job) => runClaimedJob(job, run.claims, run.dispatcher, body.delivery));
    if (settled.kind === 'postponed') message.retry({ delaySeconds: run.busyDelaySeconds });
    else if (settled.kind === 'failed') message.retry();
    else message.ack();
  } catch {
    // A subscriber of the job channel threw: the queue delivers the message again, and the store keeps it once.
    message.retry();
  }
}
