import { bodyTimeout, SenderGoneError, type BodyLimits } from './body-limits.js';
import { checkDeclaredLength } from './declared-length.js';
import { tooLarge } from '../core/payload.js';

/**
 * Reads a Fetch body stream (`declaredLength` is its `Content-Length`), at
 * most `maxPayloadBytes` of it and within `bodyTimeoutMs`. Past either it
 * cancels the stream and throws `payload_too_large` or `body_timeout`, so a
 * body sent without a length is never buffered whole and a stalled one never
 * holds the request. A stream that errors (its connection lost) throws
 * `SenderGoneError`.
 */
export async function readWebBody(
  stream: ReadableStream<Uint8Array> | null,
  declaredLength: string | undefined,
  limits: BodyLimits,
): Promise<ArrayBuffer> {
  const { maxPayloadBytes: maxBytes, bodyTimeoutMs } = limits;
  checkDeclaredLength(declaredLength, maxBytes);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (stream !== null) {
    const reader = stream.getReader();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(bodyTimeout(bodyTimeoutMs)), bodyTimeoutMs);
    });
    const next = () => Promise.race([reader.read().catch(() => Promise.reject(new SenderGoneError())), deadline]);
    try {
      for (let read = await next(); !read.done; read = await next()) {
        size += read.value.byteLength;
        if (size > maxBytes) throw tooLarge(maxBytes);
        chunks.push(read.value);
      }
    } catch (error) {
      // Not awaited: a stalled stream may never finish cancelling.
      reader.cancel().catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body.buffer;
}
