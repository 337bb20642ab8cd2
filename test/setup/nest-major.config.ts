/**
 * The NestJS specs (the module's route, and its worker on the queues) on
 * another Nest major: `@nestjs/*` resolved from the node_modules
 * `NEST_MODULES` names (test/helpers/nest-majors.ts), in the specs and in
 * svc-webhooks/nestjs alike. Run by test/adapters/nestjs-majors.test.ts.
 */
import { defineConfig } from 'vitest/config';
import { NEST_PACKAGES } from '../helpers/nest-majors.js';

const modules = process.env.NEST_MODULES;
if (modules === undefined) throw new Error('NEST_MODULES names the node_modules of the Nest major to run on');

export default defineConfig({
  resolve: { alias: NEST_PACKAGES.map((name) => ({ find: new RegExp(`^@nestjs/${name}$`), replacement: `${modules}/@nestjs/${name}` })) },
  // The worker's spec works queues on the Redis the run finds or starts.
  test: { include: ['test/adapters/nestjs.test.ts', 'test/adapters/nestjs-worker.test.ts'], globalSetup: ['test/setup/redis-for-tests.ts'] },
});
