/** Reading a refusal as the sender gets it: a JSON body `{ error: { code, message, paths? } }`. */
import { expect } from 'vitest';
import type { WebhookErrorCode } from '../../src/index.js';

/** The `error` of a refusal's JSON body; fails the test when the body is not JSON. */
export async function errorOf(response: Response): Promise<{ code: WebhookErrorCode; message: string; paths?: string[] }> {
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return ((await response.json()) as { error: { code: WebhookErrorCode; message: string; paths?: string[] } }).error;
}

/** A response's status and, for a refusal, its `error.code`, as one comparable value. */
export async function refusalOf(response: Response): Promise<{ status: number; code: string }> {
  return { status: response.status, code: (await errorOf(response)).code };
}
