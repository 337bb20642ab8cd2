import { defineNitroConfig } from 'nitro/config';

export default defineNitroConfig({
  srcDir: 'server',
  compatibilityDate: '2025-07-01',
  runtimeConfig: {
    // Set at run time by NITRO_WEBHOOK_SECRET.
    webhookSecret: '',
  },
});
