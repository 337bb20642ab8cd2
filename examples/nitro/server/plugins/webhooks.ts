/**
 * Creates the webhook entry as the server starts. Nitro imports a route on
 * its first request, and `verifyWebhook` checks its options when it is
 * called: without this plugin an unset NITRO_WEBHOOK_SECRET would answer the
 * first delivery 500. Imported here, the mistake stops the start with its
 * WebhookOptionsError. (`defineNitroPlugin` is one of Nitro's auto-imports.)
 */
import webhook from '../routes/webhooks.post';

export default defineNitroPlugin(() => {
  // A use of the import: the build drops a module whose exports nothing uses.
  if (typeof webhook !== 'function') throw new TypeError('server/routes/webhooks.post.ts exports no event handler');
});
