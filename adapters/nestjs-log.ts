/** The lines svc-webhooks/nestjs writes to the app's log, as Nest writes its own, and what they say of the `@OnWebhook` methods. */
import { Logger } from '@nestjs/common';
import type { WebhookMethods } from './nestjs-handlers.js';

/** The module's own lines, as Nest writes its own: through the app's logger, under the module's name. */
export const moduleLog = new Logger('WebhooksModule');

/** The methods for a log line: `call.missed to MissedCalls.missed, …`. */
export function describeMethods({ where }: WebhookMethods): string {
  return [...where].map(([type, name]) => `${type} to ${name}`).join(', ');
}

/** What the route's line in the log says of a handoff: where the methods run, if the app has any. */
export function describeHandoff({ types }: WebhookMethods): string {
  return types.length === 0 ? 'each delivery to its queue' : `each delivery to its queue, whose worker (WebhooksModule.forWorker) runs the @OnWebhook methods of ${types.join(', ')}`;
}
