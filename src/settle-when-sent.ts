import type { ServerResponse } from 'node:http';

/** The status settled with when the client went away before the response was sent, as nginx logs it. */
export const CLIENT_CLOSED_STATUS = 499;

/**
 * Calls `settle` once the Node response is over: with its status when it was
 * sent in full, with 499 when the connection closed first, so a dedup claim
 * is released rather than completed for an answer the sender never got.
 */
export function settleWhenSent(response: ServerResponse, settle: (status: number) => Promise<void>): void {
  const onFinish = (): void => {
    response.off('close', onClose);
    void settle(response.statusCode);
  };
  const onClose = (): void => {
    response.off('finish', onFinish);
    void settle(CLIENT_CLOSED_STATUS);
  };
  response.once('finish', onFinish).once('close', onClose);
}
