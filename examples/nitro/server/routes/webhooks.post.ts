/**
 * POST /webhooks: a Nitro (and so Nuxt) server route. Nitro reads no body
 * before the route, so the entry verifies the bytes as sent. The secret comes
 * from the runtime config, set by NITRO_WEBHOOK_SECRET (Nuxt:
 * NUXT_WEBHOOK_SECRET); server/plugins/webhooks.ts imports this route at
 * start, so that an unset secret stops the start.
 */
import { verifyWebhook } from 'svc-webhooks/h3';

const { webhookSecret } = useRuntimeConfig();

export default defineEventHandler(
  verifyWebhook({
    secret: webhookSecret,
    on: {
      'call.missed': (event, { id }) => {
        console.log(`received ${event.type} ${id}`);
      },
    },
  }),
);
