/**
 * The relay of `svc-webhooks dev`, on 127.0.0.1: deliveries come in at
 * /webhooks (no token: the tunnel or `svc-webhooks send` must reach it), are
 * recorded, verified and diagnosed here, forwarded byte for byte to the
 * receiver, and answered with the receiver's answer. The page and /api need
 * the run's token and the relay's own Host: a page elsewhere in the
 * browser can neither read them nor reach them by DNS rebinding.
 */
import { Buffer } from 'node:buffer';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { Agent, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isRecord } from '../../base/record.js';
import { KNOWN_EVENT_TYPES } from '../../core/event.js';
import { sign } from '../../core/sign.js';
import { newId } from '../../testing/envelope.js';
import { testEvent } from '../../testing/test-event.js';
import { MAX_INPUT_BYTES, readCapped } from '../shared/capped-read.js';
import { diagnose } from '../shared/diagnose.js';
import { explain } from '../shared/explain.js';
import { endToEndHeaders, REPLAY_MODES, replayedRequest, type OutgoingRequest, type ReplayMode } from '../shared/replayed-request.js';
import { DEFAULT_BOUNDS, DeliveryLog, summaryOf, type DeliveryRecord, type LogBounds, type RelayVerdict } from './delivery-log.js';
import { curlCommand } from './curl.js';
import { forward, type PassedAnswer } from './forward.js';
import { PAGE_HTML } from './page.js';
import { PageStreams } from './page-streams.js';
import { printable } from '../../base/printable.js';

/** What the relay is started with. */
export interface RelayOptions {
  /** The receiver's URL. */
  readonly forward: string;
  /** The endpoint's secrets: for the verdict, `resign`, `new-id` and the page's send. Never shown. */
  readonly secrets: readonly string[];
  /** The port on 127.0.0.1; 0 for any free one. */
  readonly port: number;
  /** A file each record is appended to, one JSON object a line; none when undefined. */
  readonly save?: string | undefined;
  /** How long the receiver has to answer: the service's 10 s unless a test shortens it. */
  readonly answerWindowMs?: number;
  /** What the log keeps: `DEFAULT_BOUNDS` unless a test shrinks it. */
  readonly bounds?: LogBounds;
  /** What may be relayed at once: `DEFAULT_IN_PROGRESS` unless a test shrinks it. */
  readonly inProgress?: InProgressBounds;
  /** How long a request may take to come in whole once its headers are in: `DEFAULT_REQUEST_TIMEOUT_MS` unless a test shortens it. */
  readonly requestTimeoutMs?: number;
  /** The clock, in milliseconds. */
  readonly now?: () => number;
  /** Told of each delivery once recorded (the receiver has answered, or given up on), before it is saved. */
  readonly onDelivery?: (record: DeliveryRecord) => void;
  /** Told of what went wrong in the relay itself: a request it failed on, a save that failed. */
  readonly onProblem?: (message: string) => void;
}

/** A running relay. */
export interface Relay {
  /** The page's address, with the run's token. */
  readonly inspectorUrl: string;
  /** Where deliveries go in. */
  readonly webhookUrl: string;
  readonly token: string;
  readonly log: DeliveryLog;
  close(): Promise<void>;
}

const ANSWER_WINDOW_MS = 10_000;
/** Deliveries relayed at once, and the bytes of their bodies: past either, a sender is answered 503 and retries. */
export interface InProgressBounds {
  readonly deliveries: number;
  readonly bytes: number;
}

export const DEFAULT_IN_PROGRESS: InProgressBounds = { deliveries: 32, bytes: 64 * 1024 * 1024 };
/** How long a request's headers may take to come in. */
const HEADERS_TIMEOUT_MS = 20_000;
/** How long a request may take to come in whole once its headers are in: a sender that trickles is answered 408. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** The longest event id and type the list shows: the body holds the rest. */
const MAX_SHOWN_LENGTH = 256;

/** Starts the relay; resolves once it listens. */
export async function startRelay(options: RelayOptions): Promise<Relay> {
  const { secrets, answerWindowMs = ANSWER_WINDOW_MS, requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS, now = Date.now, onProblem = () => {} } = options;
  const token = randomBytes(24).toString('base64url');
  const log = new DeliveryLog(options.bounds ?? DEFAULT_BOUNDS);
  const streams = new PageStreams();
  const busy = options.inProgress ?? DEFAULT_IN_PROGRESS;
  const agents = { http: new Agent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  const receiverUrl = new URL(options.forward);
  let port = 0;
  const inProgress = { deliveries: 0, bytes: 0 };
  // One append after another: appends of long lines side by side interleave their pieces.
  let saving = Promise.resolve();

  /** Records, verifies, forwards and keeps one delivery; tells the page. */
  async function relay(request: OutgoingRequest, source: DeliveryRecord['source'], replay?: { of: number; mode: ReplayMode }): Promise<{ record: DeliveryRecord; passOn?: PassedAnswer }> {
    const n = log.take();
    const receivedAt = new Date(now()).toISOString();
    const verdict = verdictOf(request, secrets, now());
    const { answer, passOn } = await forward(receiverUrl, { headers: endToEndHeaders(request.headers), body: request.body }, answerWindowMs, agents);
    const event = envelopeOf(request.body);
    const record: DeliveryRecord = {
      n,
      receivedAt,
      source,
      ...(replay !== undefined && { replayOf: replay.of, mode: replay.mode }),
      ...(event !== undefined && { event }),
      request: { headers: request.headers, bodyBase64: request.body.toString('base64') },
      verdict,
      answer,
    };
    log.add(record);
    streams.send('delivery', { delivery: summaryOf(record), dropped: log.dropped });
    options.onDelivery?.(record);
    const { save } = options;
    if (save !== undefined) {
      const line = `${JSON.stringify(record)}\n`;
      saving = saving.then(() => appendFile(save, line)).catch((error: unknown) => onProblem(`could not append to ${save}: ${(error as Error).message}`));
      await saving;
    }
    return passOn === undefined ? { record } : { record, passOn };
  }

  /**
   * Relays a sender's delivery within the bounds of what is in progress: past them, 503 and the sender retries.
   * A body reserves its declared length before it is read, and what comes past it (a body in chunks) as it comes.
   */
  async function relayFromSender(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const declared = Math.min(Number(req.headers['content-length'] ?? 0), MAX_INPUT_BYTES);
    if (inProgress.deliveries >= busy.deliveries || inProgress.bytes + declared > busy.bytes) return answerBusy(res);
    inProgress.deliveries += 1;
    inProgress.bytes += declared;
    let reserved = declared;
    try {
      const body = await readCapped(req, 'the request', (size) => {
        if (size <= reserved) return;
        if (inProgress.bytes + size - reserved > busy.bytes) throw new RelayBusyError();
        inProgress.bytes += size - reserved;
        reserved = size;
      });
      answerSender(res, await relay({ headers: headersOf(req), body }, 'sender'));
    } finally {
      inProgress.deliveries -= 1;
      inProgress.bytes -= reserved;
    }
  }

  function answerBusy(res: ServerResponse): void {
    res.setHeader('retry-after', '5');
    json(res, 503, problem('relay_busy', `the relay has ${inProgress.deliveries} deliveries in progress; retry later`));
  }

  async function route(req: IncomingMessage, res: ServerResponse, url: URL | undefined): Promise<void> {
    if (url === undefined) return json(res, 404, problem('not_found', 'no such page or operation'));
    if (url.pathname === '/webhooks') {
      if (req.method !== 'POST') return json(res, 405, problem('method_not_allowed', 'deliveries are POSTed to /webhooks'));
      return relayFromSender(req, res);
    }
    // Everything else is the page's: its own Host, and the run's token.
    if (!ownHost(req.headers.host, port) || !hasToken(req, url, token)) return json(res, 403, problem('forbidden', 'this needs the address the relay printed, with its token'));
    if (url.pathname === '/' && req.method === 'GET') return send(res, 200, 'text/html; charset=utf-8', PAGE_HTML);
    if (url.pathname === '/api/deliveries' && req.method === 'GET') return json(res, 200, { deliveries: log.summaries(), dropped: log.dropped });
    if (url.pathname === '/api/deliveries' && req.method === 'DELETE') {
      log.clear();
      streams.send('cleared', {});
      return void res.writeHead(204, { 'cache-control': 'no-store' }).end();
    }
    if (url.pathname === '/api/events' && req.method === 'GET') return streams.open(res);
    if (url.pathname === '/api/send' && req.method === 'POST') return json(res, 201, (await relay(await sentRequest(req), 'send')).record);
    if (url.pathname === '/api/samples' && req.method === 'GET') return json(res, 200, { samples: samples() });
    const match = /^\/api\/deliveries\/(\d{1,9})(\/replay|\/curl)?$/.exec(url.pathname);
    const record = match === null ? undefined : log.get(Number(match[1]));
    if (match === null || (match[2] === '/replay' ? req.method !== 'POST' : req.method !== 'GET')) return json(res, 404, problem('not_found', 'no such page or operation'));
    if (record === undefined) return json(res, 404, problem('not_found', `no delivery ${match[1]}: it was never recorded, or dropped past the bounds`));
    if (match[2] === undefined) return json(res, 200, record);
    if (match[2] === '/curl') return json(res, 200, { command: curlCommand(`http://127.0.0.1:${port}/webhooks`, record.request.headers, Buffer.from(record.request.bodyBase64, 'base64')) });
    const mode = (await jsonBody(req)).mode;
    if (!REPLAY_MODES.includes(mode as ReplayMode)) return json(res, 400, problem('bad_request', `mode must be one of ${REPLAY_MODES.join(', ')}`));
    const recorded = { headers: record.request.headers, body: Buffer.from(record.request.bodyBase64, 'base64') };
    let replayed: OutgoingRequest;
    try {
      replayed = replayedRequest(recorded, mode as ReplayMode, secrets, now());
    } catch (error) {
      throw new RelayRequestError((error as Error).message);
    }
    return json(res, 201, (await relay(replayed, 'replay', { of: record.n, mode: mode as ReplayMode })).record);
  }

  /** The page's send: an event of `type` as testEvent makes it, with a `msg_` id as `svc-webhooks send` gives, `data` merged in, signed now. */
  async function sentRequest(req: IncomingMessage): Promise<OutgoingRequest> {
    const { type, data } = await jsonBody(req);
    if (typeof type !== 'string') throw new RelayRequestError('type must be an event type string');
    if (data !== undefined && !isRecord(data)) throw new RelayRequestError('data must be a JSON object');
    let event: { id: string };
    try {
      event = testEvent(type as never, { id: newId('msg', now()), ...(data !== undefined && { data }) } as never, { now });
    } catch (error) {
      throw new RelayRequestError((error as Error).message.replace(/^svc-webhooks: /, ''));
    }
    const body = Buffer.from(JSON.stringify(event));
    return { headers: { 'content-type': 'application/json', ...sign(body, { id: event.id, timestamp: Math.floor(now() / 1000), secret: [...secrets] }) }, body };
  }

  /** The `data` testEvent gives each type the spec names, each with a fresh object id: what the page's send starts from. */
  function samples(): Record<string, unknown> {
    return Object.fromEntries(KNOWN_EVENT_TYPES.map((type) => [type, testEvent(type, undefined, { now }).data]));
  }

  // Node's own requestTimeout is checked every 30 s and drops the connection without a word: the relay keeps its own.
  const server: Server = createServer({ headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: 0 }, (req, res) => {
    // A request still coming is answered 408 and its connection ends; then its read, still waiting, is ended too.
    // One answered before it came whole (refused as it came) has its connection ended.
    const { socket } = req;
    const timer = setTimeout(() => {
      if (req.complete) return;
      if (res.headersSent) return void socket.destroy();
      res.setHeader('connection', 'close');
      json(res, 408, problem('request_timeout', `the request did not come in whole within ${requestTimeoutMs / 1000} s`));
      res.once('finish', () => req.destroy(new RelayTimeoutError()));
    }, requestTimeoutMs).unref();
    res.once('close', () => {
      if (req.complete) clearTimeout(timer);
    });
    const url = URL.canParse(req.url ?? '/', 'http://relay.invalid') ? new URL(req.url ?? '/', 'http://relay.invalid') : undefined;
    route(req, res, url).catch((error: unknown) => {
      if (error instanceof RelayTimeoutError) return;
      // Refused as it came (too large, past the bytes in progress): the rest is not read, and the connection ends.
      if (!req.complete) res.setHeader('connection', 'close');
      if (error instanceof RelayRequestError) return json(res, 400, problem('bad_request', error.message));
      if (error instanceof RelayBusyError) return answerBusy(res);
      if ((error as Error).name === 'UsageError') return json(res, 413, problem('too_large', (error as Error).message));
      // A client that went away mid-request is no failure of the relay's. Its socket tells: a request read to its
      // end is destroyed as well, whoever failed.
      if (req.socket.destroyed) return void res.destroy();
      // The path alone: a query may hold the run's token.
      onProblem(`a request to ${printable(url?.pathname ?? '?')} failed: ${printable((error as Error).message)}`);
      if (res.headersSent) res.destroy();
      else json(res, 500, problem('relay_failed', 'the relay failed on this request'));
    });
  });
  // A malformed request is the client's problem: drop its connection, never the relay.
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    inspectorUrl: `http://127.0.0.1:${port}/?token=${token}`,
    webhookUrl: `http://127.0.0.1:${port}/webhooks`,
    token,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        agents.http.destroy();
        agents.https.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A mistake in a request to the API: 400 with its message. */
class RelayRequestError extends Error {}

/** A body that came past the bytes in progress: 503, and the sender retries. */
class RelayBusyError extends Error {}

/** What ends the read of a request answered 408: it was not in whole in time. */
class RelayTimeoutError extends Error {}

/** The sender gets the receiver's answer, or 502 when none came. */
function answerSender(res: ServerResponse, { record, passOn }: { record: DeliveryRecord; passOn?: PassedAnswer }): void {
  if (passOn === undefined) return json(res, 502, problem('receiver_unreachable', `the receiver gave no answer: ${record.answer.failure}`));
  res.writeHead(passOn.status, passOn.headers).end(passOn.body);
}

/** The relay's own verdict on a request, as `svc-webhooks verify` gives it. */
function verdictOf(request: OutgoingRequest, secrets: readonly string[], nowMs: number): RelayVerdict {
  const diagnosis = diagnose({ body: request.body, headers: request.headers, secrets, nowMs });
  const lines = explain(diagnosis);
  return diagnosis.error === undefined ? { valid: true, lines } : { valid: false, code: diagnosis.error.code, lines };
}

/** The envelope's id and type, when the body has them. */
function envelopeOf(body: Buffer): DeliveryRecord['event'] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const { id, type } = isRecord(parsed) ? parsed : {};
  return typeof id === 'string' && typeof type === 'string' ? { id: id.slice(0, MAX_SHOWN_LENGTH), type: type.slice(0, MAX_SHOWN_LENGTH) } : undefined;
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}

/** Whether `host` names the relay itself: a page on another name that resolves here (DNS rebinding) does not. */
function ownHost(host: string | undefined, port: number): boolean {
  return host === `127.0.0.1:${port}` || host === `localhost:${port}`;
}

function hasToken(req: IncomingMessage, url: URL, token: string): boolean {
  const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  const given = Buffer.from(url.searchParams.get('token') ?? bearer ?? '');
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = (await readCapped(req, 'the request')).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text === '' ? '{}' : text);
  } catch {
    throw new RelayRequestError('the body is not JSON');
  }
  if (!isRecord(parsed)) throw new RelayRequestError('the body must be a JSON object');
  return parsed;
}

function problem(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

function json(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json', JSON.stringify(value));
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  // No CORS headers: no other origin may read what the relay holds.
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }).end(body);
}
