/**
 * POST /webhooks: a Nitro 3 server route. Nitro reads no body before the
 * route, so the entry verifies the bytes as sent. The secret comes from the
 * runtime config, set by NITRO_WEBHOOK_SECRET; server/plugins/webhooks.ts
 * imports this route at start, so that an unset secret stops the start.
 * Nitro 3 imports nothing by itself: h3's helpers come from `nitro/h3`, the
 * runtime's from `nitro/runtime`.
 */
import { defineHandler } from 'nitro/h3';
import { useRuntimeConfig } from 'nitro/runtime';
import { verifyWebhook } from 'svc-webhooks/h3';

const { webhookSecret } = useRuntimeConfig();

export default defineHandler(
  verifyWebhook({
    secret: webhookSecret,
    on: {
      'call.missed': (event, { id }) => {
        console.log(`received ${event.type} ${id}`);
      },
    },
  }),
);
