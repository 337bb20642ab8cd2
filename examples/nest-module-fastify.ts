/**
 * The NestJS receiver of examples/nest-module.ts on @nestjs/platform-fastify:
 * `npx tsx examples/nest-module-fastify.ts`, then point the service at
 * http://127.0.0.1:3000/webhooks.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AppModule } from './nest-module-app.js';

const app = await NestFactory.create(AppModule, new FastifyAdapter(), { rawBody: true, logger: ['error', 'warn'] });
await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
console.log(`listening on ${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/webhooks`);
