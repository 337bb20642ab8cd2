/**
 * A NestJS receiver with svc-webhooks/nestjs on @nestjs/platform-express:
 * `npx tsx examples/nest-module.ts`, then point the service at
 * http://127.0.0.1:3000/webhooks. The app is in examples/nest-module-app.ts;
 * examples/nest-module-fastify.ts serves it on @nestjs/platform-fastify.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './nest-module-app.js';

// rawBody: true keeps the bytes as sent beside the parsed body: the module's route verifies those.
const app = await NestFactory.create(AppModule, { rawBody: true, logger: ['error', 'warn'] });
await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
console.log(`listening on ${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/webhooks`);
