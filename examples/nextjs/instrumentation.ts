/**
 * Next.js runs `register` once as the server starts. `next start` loads a
 * route on its first request, and `verifyWebhook` checks its options when it
 * is called: without this hook an empty WEBHOOK_SECRET would answer every
 * delivery 500. Imported here, the route's mistake stops the start.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  try {
    await import('./app/api/webhooks/route');
  } catch (error) {
    // Next.js logs an error of this hook and serves on: exit, so that the start fails rather than the deliveries.
    console.error(error);
    process.exit(1);
  }
}
