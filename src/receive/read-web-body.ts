import { tooLarge } from '../core/payload.js';

/**
 * Reads a Fetch body stream, at most `maxBytes` of it. Past the limit it
 * cancels the stream and throws `payload_too_large`, so a body sent without
 * a length is never buffered whole.
 */
export async function readWebBody(stream: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<ArrayBuffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (stream !== null) {
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      size += read.value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw tooLarge(maxBytes);
      }
      chunks.push(read.value);
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
