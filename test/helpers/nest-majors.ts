/**
 * The NestJS majors of the peer range besides the one installed with the
 * repository (12): each installed on demand in `.cache/nest-majors/<major>`,
 * with its platforms and the `@nestjs/config` of its line, for the NestJS
 * spec to run again on it (test/adapters/nestjs-majors.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package/pack.js';

/** Each other major, with the `@nestjs/config` major that takes it. */
export const OTHER_NEST_MAJORS = [
  { major: '10', config: '3' },
  { major: '11', config: '4' },
] as const;

/** The packages the NestJS spec imports from Nest, which the run on another major takes from its folder. */
export const NEST_PACKAGES = ['common', 'core', 'platform-express', 'platform-fastify', 'config'] as const;

/** The node_modules of `major`, installed there first if it is not yet. */
export function nestModules({ major, config }: (typeof OTHER_NEST_MAJORS)[number]): string {
  const folder = join(PACKAGE_ROOT, '.cache/nest-majors', major);
  const modules = join(folder, 'node_modules');
  const installed = join(modules, '@nestjs/core/package.json');
  if (existsSync(installed) && (JSON.parse(readFileSync(installed, 'utf8')) as { version: string }).version.startsWith(`${major}.`)) return modules;
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: `nest-${major}`, private: true }));
  const specs = NEST_PACKAGES.map((name) => `@nestjs/${name}@${name === 'config' ? config : major}`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', ...specs, 'reflect-metadata', 'rxjs'], { cwd: folder, stdio: 'ignore' });
  return modules;
}
