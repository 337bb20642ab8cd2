/**
 * The webhook route of svc-webhooks/nestjs: a controller of the module's
 * own, given its path at bootstrap, so that Nest serves it as any route of
 * the app, behind the app's middleware, guards, interceptors, exception
 * filters and body parsers; and the platform the shared request path runs
 * on there, Express or Fastify, reading the bytes Nest kept (`rawBody: true`).
 */
import { Controller, Post, Req, Res, type Type } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { EntryName } from '../src/process/diagnostics.js';
import { rawBodyLeftByParser, readNodeBody } from '../src/receive/node-platform.js';
import type { Platform } from '../src/receive/platform.js';
import type { WebhookResponse } from '../src/receive/responses.js';
import { sendOnExpress, sendOnFastify } from './answers.js';

/** What the route reads of the platform's request, Express's `req` or Fastify's `request`. */
export interface RouteRequest {
  readonly headers: IncomingHttpHeaders;
  /** The route's parameters: `tenant` on `<path>/:tenant`. */
  readonly params: unknown;
  /** What Nest's parser made of the body. */
  readonly body?: unknown;
  /** The bytes as sent, kept by Nest's parser with `rawBody: true`. */
  readonly rawBody?: unknown;
}

/** One request to the route: the platform's request and response, as Nest hands them to `@Req()` and `@Res()`. */
export interface NestRouteRequest {
  readonly req: RouteRequest;
  readonly res: unknown;
}

/** The route's controller, and how it gets its path and what it runs, once the options are known. */
export interface RouteController {
  /** The controller, for the module's `controllers`. */
  readonly controller: Type;
  /** Serves `POST route` with `receive`; before Nest registers the app's routes, at `app.init()`. */
  mount(route: string, receive: (request: NestRouteRequest) => Promise<unknown>): void;
}

/** A controller of its own for one module, with no route until `mount` gives it one. */
export function webhooksController(): RouteController {
  let receive: ((request: NestRouteRequest) => Promise<unknown>) | undefined;
  // Built here rather than decorated: its path is known only once the options are, at bootstrap.
  class WebhooksController {
    /** Answers each request itself, on the platform's response. */
    async receive(req: RouteRequest, res: unknown): Promise<void> {
      await receive!({ req, res });
    }
  }
  const { prototype } = WebhooksController;
  Controller()(WebhooksController);
  Req()(prototype, 'receive', 0);
  Res()(prototype, 'receive', 1);
  return {
    controller: WebhooksController,
    mount(route, given) {
      receive = given;
      Post(route)(prototype, 'receive', Object.getOwnPropertyDescriptor(prototype, 'receive')!);
    },
  };
}

/** What differs between the platforms: the Node request and response beneath theirs, and how an answer is sent. */
interface Side<Q, S> {
  readonly entry: EntryName;
  node(req: Q): IncomingMessage;
  response(res: S): ServerResponse;
  send(res: S, response: WebhookResponse): void;
}

const EXPRESS: Side<Request, Response> = { entry: 'express', node: (req) => req, response: (res) => res, send: sendOnExpress };
const FASTIFY: Side<FastifyRequest, FastifyReply> = { entry: 'fastify', node: (request) => request.raw, response: (reply) => reply.raw, send: sendOnFastify };

/**
 * The platform of the route on Nest's `platform`: the diagnostics see it as
 * the entry of that platform. The body is the bytes Nest's parser kept, or
 * the stream where no parser read it (another content type, `bodyParser: false`).
 */
export function nestPlatform(platform: 'express' | 'fastify'): Platform<NestRouteRequest, void> {
  const side = (platform === 'express' ? EXPRESS : FASTIFY) as unknown as Side<RouteRequest, unknown>;
  return {
    entry: side.entry,
    body({ req }, limits) {
      const node = side.node(req);
      return rawBodyLeftByParser({ rawBody: req.rawBody, body: req.body, readableDidRead: node.readableDidRead, headers: node.headers }) ?? readNodeBody(node, node.headers['content-length'], limits);
    },
    headers: ({ req }) => req.headers,
    userRequest: ({ req }) => req,
    send: ({ res }, response) => side.send(res, response),
    statusOf: ({ res }) => side.response(res).statusCode,
    // The route returns, with nobody left to answer.
    senderGone: () => undefined,
  };
}
