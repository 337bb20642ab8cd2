import type { ServerResponse } from 'node:http';

/** Resolves once `response` has ended or its connection closed: at once if it has. */
export function responseEnded(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (response.writableEnded || response.destroyed) return resolve();
    response.once('finish', resolve).once('close', resolve);
  });
}
