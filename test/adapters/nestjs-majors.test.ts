/**
 * The NestJS specs (test/adapters/nestjs.test.ts, and the worker's,
 * test/adapters/nestjs-worker.test.ts) again on each other major of
 * the peer range, 10 and 11, both platforms each: a vitest of its own with
 * `@nestjs/*` taken from that major's folder (test/helpers/nest-majors.ts,
 * installed there on first use). This spec fails when that run fails or
 * passes no test.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nestModules, OTHER_NEST_MAJORS } from '../helpers/nest-majors.js';
import { PACKAGE_ROOT } from '../package/pack.js';

/** Runs the NestJS spec on the Nest packages in `modules`; resolves to its exit code and its output. */
function runSpec(modules: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/setup/nest-major.config.ts'], {
    cwd: PACKAGE_ROOT,
    env: { ...process.env, NEST_MODULES: modules, NO_COLOR: '1' },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('NestJS majors', () => {
  it('covers every major of the peer range: 12 here, the others each in a run of its own', () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
    const peerMajors = manifest.peerDependencies['@nestjs/core']!.split('||').map((range) => /^\s*\^(\d+)\.0\.0\s*$/.exec(range)![1]);
    const installed = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'node_modules/@nestjs/core/package.json'), 'utf8')) as { version: string }).version.split('.')[0];
    expect([...OTHER_NEST_MAJORS.map(({ major }) => major), installed].sort()).toEqual(peerMajors.sort());
  });

  it.each(OTHER_NEST_MAJORS.map((nest) => [nest.major, nest] as const))('runs the NestJS spec on NestJS %s, both platforms', async (_major, nest) => {
    const modules = nestModules(nest);
    const version = (JSON.parse(readFileSync(join(modules, '@nestjs/core/package.json'), 'utf8')) as { version: string }).version;
    expect(version.startsWith(`${nest.major}.`)).toBe(true);
    const { code, output } = await runSpec(modules);
    expect(output, output).toMatch(/Tests\s+\d+ passed/);
    expect(code, output).toBe(0);
  }, 300_000); // an install on first use, then the spec
});
