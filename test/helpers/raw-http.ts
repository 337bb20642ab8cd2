/**
 * HTTP/1.1 by hand over one TCP connection, for what fetch cannot do: send a
 * header line twice, declare a length and then stall, trickle or hang up, send
 * a body in chunks as it comes, and see whether the server closed the
 * connection after it answered.
 */
import { Buffer } from 'node:buffer';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  readonly status: number;
  /** Header names in lower case; repeated lines joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export class RawConnection {
  readonly #socket: Socket;
  #received = Buffer.alloc(0);
  #serverEnded = false;
  readonly #changed = new Set<() => void>();

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#received = Buffer.concat([this.#received, chunk]);
      this.#notify();
    });
    socket.on('end', () => {
      this.#serverEnded = true;
      this.#notify();
    });
    // A reset after the server's answer is one way for it to close the connection.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.#serverEnded = true;
      this.#notify();
    });
  }

  /** Connects to the host and port of `baseUrl`. */
  static async open(baseUrl: string): Promise<RawConnection> {
    const { hostname, port } = new URL(baseUrl);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    return new RawConnection(socket);
  }

  /**
   * Sends a POST to `path` with these header lines, in order and repeats kept,
   * a `Content-Length` of `contentLength` (the body's own by default), then
   * `body`: less than declared leaves the rest owed.
   */
  post(path: string, headers: ReadonlyArray<readonly [string, string]>, body: string, contentLength = Buffer.byteLength(body)): void {
    const lines = [`POST ${path} HTTP/1.1`, 'host: localhost', ...headers.map(([name, value]) => `${name}: ${value}`), `content-length: ${contentLength}`];
    this.#socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  }

  /** Sends a POST to `path` with these header lines and `Transfer-Encoding: chunked`, and no chunk yet. */
  postChunked(path: string, headers: ReadonlyArray<readonly [string, string]>): void {
    const lines = [`POST ${path} HTTP/1.1`, 'host: localhost', ...headers.map(([name, value]) => `${name}: ${value}`), 'transfer-encoding: chunked'];
    this.#socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  }

  /** Sends `body` as the next chunk of a chunked request: an empty one ends it. */
  chunk(body: string): void {
    this.#socket.write(`${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n`);
  }

  /** Sends more of a body whose length was declared. */
  write(body: string): void {
    this.#socket.write(body);
  }

  /** Hangs up without finishing the request. */
  hangUp(): void {
    this.#socket.destroy();
  }

  /** The first response, once whole; rejects if the server closes first or it takes past `timeoutMs`. */
  response(timeoutMs = 4000): Promise<RawResponse> {
    return this.#when(() => parseResponse(this.#received, this.#serverEnded), timeoutMs, 'a whole response');
  }

  /** Resolves once the server has closed the connection; rejects past `timeoutMs`. */
  closed(timeoutMs = 4000): Promise<void> {
    return this.#when(() => (this.#serverEnded ? true : undefined), timeoutMs, 'the server to close the connection').then(() => undefined);
  }

  #when<T>(ready: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const value = ready();
        if (value !== undefined) {
          done();
          resolve(value);
        } else if (this.#serverEnded) {
          done();
          reject(new Error(`the connection closed before ${what}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.#changed.delete(check);
      };
      this.#changed.add(check);
      check();
    });
  }

  #notify(): void {
    for (const check of [...this.#changed]) check();
  }
}

/** The response in `bytes` if it is whole: by Content-Length, chunked, or ended by the close. */
function parseResponse(bytes: Buffer, ended: boolean): RawResponse | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const [statusLine = '', ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const status = Number(statusLine.split(' ')[1]);
  const rest = bytes.subarray(headEnd + 4);
  let body: Buffer | undefined;
  if (status === 204 || status === 304) body = Buffer.alloc(0);
  else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (rest.length >= length) body = rest.subarray(0, length);
  } else if (headers['transfer-encoding'] === 'chunked') body = dechunk(rest);
  else if (ended) body = rest;
  return body === undefined ? undefined : { status, headers, body: body.toString('utf8') };
}

/** The body of a chunked encoding if its last chunk arrived. */
function dechunk(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (size === 0) return Buffer.concat(parts);
    if (bytes.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
