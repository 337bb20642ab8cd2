/**
 * The pages' live streams (Server-Sent Events): each new delivery goes to
 * every page that is open. A page that stops reading (a tab in the
 * background, a client that never reads) must not make the relay hold what
 * it does not read: past `MAX_BACKLOG_BYTES` unsent, its stream is ended,
 * and the browser opens it again and reads the list anew.
 */
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';

/** What one stream may hold unsent before it is ended. */
export const MAX_BACKLOG_BYTES = 1024 * 1024;

/** The open streams. */
export class PageStreams {
  readonly #streams = new Set<Writable>();

  /** Answers `res` as a stream of events, and keeps it until it closes. */
  open(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.write(': connected\n\n');
    this.add(res);
  }

  /** Keeps `stream` until it closes. */
  add(stream: Writable): void {
    this.#streams.add(stream);
    stream.on('close', () => this.#streams.delete(stream));
  }

  /** Sends event `name` with `data` (as JSON) to every stream; ends those that fell behind. */
  send(name: string, data: unknown): void {
    const message = `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const stream of this.#streams) {
      if (stream.writableLength > MAX_BACKLOG_BYTES) {
        this.#streams.delete(stream);
        stream.destroy();
      } else stream.write(message);
    }
  }

  /** How many streams are open. */
  get size(): number {
    return this.#streams.size;
  }
}
