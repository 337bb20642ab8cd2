/**
 * An AWS Lambda function for webhooks, behind API Gateway (REST or HTTP API),
 * a Function URL or an Application Load Balancer: the same handler takes
 * every one of their events. Bundle and deploy it as any Node.js function:
 *
 *   npx esbuild examples/lambda.ts --bundle --platform=node --format=esm --outfile=dist-lambda/index.mjs
 *
 * with the handler `index.handler` and WEBHOOK_SECRET in the function's
 * environment. The Lambda freezes once the handler returns, so the dedup
 * claim is settled before it does.
 */
import { MemoryDedupStore } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/lambda';

const secret = process.env.WEBHOOK_SECRET ?? 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLWxvY2FsLXRyaWFscw==';

// Lives as long as the execution environment: concurrent instances need a shared store (RedisDedupStore).
const dedup = new MemoryDedupStore();

export const handler = verifyWebhook({ secret, dedup: { store: dedup } }, async (event, { id, context }) => {
  console.log(`received ${event.type} ${id} in ${context.awsRequestId}`);
  // Send the work to a queue (SQS) and answer at once; nothing returned answers 204.
});
