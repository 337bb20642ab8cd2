/** The connection of the app's `@nestjs/bullmq` for the NestJS worker, found by the tokens that package provides it under: nothing of it is imported. */
import type { ModuleRef } from '@nestjs/core';
import type { WorkerOptions } from 'bullmq';

/** What the worker takes of `@nestjs/bullmq`'s options for a queue: where Redis is. */
export type NestBullMQConnection = Pick<WorkerOptions, 'connection' | 'prefix'>;

/**
 * The connection of the app's `@nestjs/bullmq` for the queue `name`: its
 * registered queue's (`getQueueToken(name)`), else the one of its
 * `forRoot` (`getSharedConfigToken()`), as `@nestjs/bullmq`'s own workers
 * take it; `undefined` where the app has neither.
 */
export function nestBullMQConnection(moduleRef: ModuleRef, name: string): NestBullMQConnection | undefined {
  const options = provided<{ readonly opts?: NestBullMQConnection }>(moduleRef, `BullQueue_${name}`)?.opts ?? provided<NestBullMQConnection>(moduleRef, 'BULLMQ_CONFIG(default)');
  if (options?.connection === undefined) return undefined;
  const { connection, prefix } = options;
  return { connection, ...(prefix !== undefined && { prefix }) };
}

/** The provider of `token` in any module of the app, or `undefined` where there is none. */
function provided<T>(moduleRef: ModuleRef, token: string): T | undefined {
  try {
    return moduleRef.get<unknown, T>(token, { strict: false });
  } catch {
    // Nest's UnknownElementException: the app has no such provider.
    return undefined;
  }
}
