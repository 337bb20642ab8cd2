import { Buffer } from 'node:buffer';
import type { Readable } from 'node:stream';
import { bodyTimeout, SenderGoneError, type BodyLimits } from './body-limits.js';
import { checkDeclaredLength } from './declared-length.js';
import { tooLarge } from '../core/payload.js';

/**
 * Reads a Node request body (`declaredLength` is its `Content-Length`), at
 * most `maxPayloadBytes` of it and within `bodyTimeoutMs`. Past either it
 * stops reading and throws `payload_too_large` or `body_timeout` at once,
 * without buffering the rest: the caller then answers and should close the
 * connection. A connection lost mid-body throws `SenderGoneError`.
 */
export async function readNodeBody(body: Readable, declaredLength: string | undefined, limits: BodyLimits): Promise<Buffer> {
  const { maxPayloadBytes: maxBytes, bodyTimeoutMs } = limits;
  checkDeclaredLength(declaredLength, maxBytes);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      clearTimeout(deadline);
      body.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
    };
    const fail = (error: unknown): void => {
      stop();
      body.pause();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > maxBytes) fail(tooLarge(maxBytes));
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onGone = (): void => fail(new SenderGoneError());
    const deadline = setTimeout(() => fail(bodyTimeout(bodyTimeoutMs)), bodyTimeoutMs);
    body.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  });
}
