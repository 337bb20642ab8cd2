import type { ServerResponse } from 'node:http';

/**
 * Calls `settle` once with the status the route chose, when it ends the Node
 * response. That is the route's outcome whether or not the sender is still
 * connected: a sender that hung up (the service waits 10 s) retries later and
 * must then find the event done or released by that outcome, never released
 * while the route still runs. A route that never ends leaves the claim to
 * its lease.
 */
export function settleWhenEnded(response: ServerResponse, settle: (status: number) => Promise<void>): void {
  // 'finish' never fires once the socket is gone, so watch the route's own end() call.
  const end = response.end;
  response.end = function (this: ServerResponse, ...args: unknown[]) {
    response.end = end;
    // settle never rejects, and the response must not wait for its store retries.
    void settle(response.statusCode);
    return (end as (...endArgs: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['end'];
}
