import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { checkDeclaredLength } from './declared-length.js';
import { tooLarge } from '../core/payload.js';

/**
 * Reads a Node request body, at most `maxBytes` of it. Past the limit it
 * stops reading and throws `payload_too_large` at once, without buffering the
 * rest: the caller then answers 413 and should close the connection.
 */
export async function readNodeBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  checkDeclaredLength(request.headers['content-length'], maxBytes);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      request.off('data', onData).off('end', onEnd).off('error', fail).off('close', onClose);
    };
    const fail = (error: unknown): void => {
      stop();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        request.pause();
        fail(tooLarge(maxBytes));
      } else chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onClose = (): void => fail(new Error('svc-webhooks: the request closed before its body ended'));
    request.on('data', onData).on('end', onEnd).on('error', fail).on('close', onClose);
  });
}
