/**
 * The placeholders of the docs' snippets: names a snippet uses but leaves to
 * the reader (their app, their queue, their database), declared once so that
 * `npm run check:docs` type-checks every snippet of README.md and docs/.
 * A snippet imports what it uses of svc-webhooks and of the frameworks
 * itself; only the reader's own things belong here. Each snippet is a module
 * of its own, so one that declares a name (`const app = express()`) shadows
 * the placeholder.
 */
/// <reference path="./node-sqlite.d.ts" />
/// <reference path="./cloudflare-workers.d.ts" />
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { Express, Request as ExpressRequest, RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { DedupStore, StandardSchema, WebhookEvent } from 'svc-webhooks';
import type { FetchWebhook } from 'svc-webhooks/fetch';

/** What a schema for `message.received` validates to in the snippets. */
interface ReceivedMessage {
  readonly id: string;
  readonly type: 'message.received';
  readonly data: { readonly object: { readonly id: string; readonly from: string; readonly text: string } };
}

declare global {
  // The reader's application.
  /** Calls back the caller of a missed call: the work a handler hands off. */
  function queueCallback(eventId: string, callId: string): Promise<void>;
  /** A durable queue of the reader's. */
  const queue: { add(...items: unknown[]): Promise<void> };
  /** Where received messages go. */
  const inbox: { add(from: string, text: string): Promise<void> };
  /** The reader's own handling of an event, run after the answer. */
  function handle(event: WebhookEvent, ...context: unknown[]): Promise<void>;
  /** A zod, valibot or arktype schema of `message.received`. */
  const messageSchema: StandardSchema<unknown, ReceivedMessage>;
  const secret: string;
  const dedup: DedupStore;
  /** Finds a tenant's signing secret in the reader's database or KMS; undefined for an unknown tenant. */
  function lookupSecret(tenant: string): Promise<string | undefined>;

  // The quick start's `verify()` receiver, used again further on.
  const MAX_BYTES: number;
  function readAtMost(request: Request, max: number): Promise<ArrayBuffer>;
  /** A Fetch handler built by `verifyWebhook` from svc-webhooks/fetch. */
  const webhook: FetchWebhook;

  // An Express app, its route and its request, as in the Express sections.
  const app: Express;
  const handler: RequestHandler;
  const req: ExpressRequest;

  // Connections.
  const redis: Redis;
  const url: string;
  const host: string;
  const port: number;
  const rootNodes: { url: string }[];
  /** Any Redis client with a `sendCommand`. */
  const client: { sendCommand(args: string[]): Promise<unknown> };
  const pool: pg.Pool;

  // Object-relational mappers: a table, a row's fields, a database of each.
  /** A Drizzle table: its columns are the reader's. */
  const messages: any;
  const id: string;
  const type: string;
  const db: NodePgDatabase;
  const kysely: Kysely<{ messages: { id: string; type: string } }>;
  /** The part of a Prisma client the snippets use. */
  const prisma: {
    $transaction<T>(work: (tx: PrismaTransaction) => Promise<T>): Promise<T>;
  };
  interface PrismaTransaction {
    $queryRawUnsafe<T>(query: string, ...values: unknown[]): Promise<T>;
    message: { create(args: { data: { id: string; type: string } }): Promise<unknown> };
  }

  // The AWS SDK's SQS client (@aws-sdk/client-sqs), which this package does not depend on.
  const sqs: { send(command: SendMessageCommand): Promise<unknown> };
  class SendMessageCommand {
    constructor(input: { QueueUrl: string; MessageBody: string; MessageGroupId?: string; MessageDeduplicationId?: string });
  }
  const QueueUrl: string;

  // The hosts' own globals and types: Deno's, and a Cloudflare Worker's (@cloudflare/workers-types).
  const Deno: {
    env: { get(name: string): string | undefined };
    serve(handler: (request: Request) => Response | Promise<Response>): unknown;
  };
  interface Env {
    readonly WEBHOOK_SECRET: string;
    readonly QUEUE: { send(message: unknown): Promise<void> };
  }
  interface ExecutionContext {
    waitUntil(promise: Promise<unknown>): void;
  }

  /** An event already verified, as in the Events section. */
  const event: WebhookEvent;
}
