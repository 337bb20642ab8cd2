/**
 * `svc-webhooks types --schemas` when the system refuses to rename the
 * second file into place after the first was: the message says which file
 * was written and that the rest is stale. Only a rename that fails between
 * the two shows it, which no real folder gives on demand: rename is mocked.
 */
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { inProcessCli } from '../in-process-cli.js';
import { CONTRACTS } from '../../helpers/contract-types.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, rename: vi.fn(actual.rename) };
});

describe('svc-webhooks types when a later rename fails', () => {
  it('names the file it wrote and calls the rest stale, leaving no temporary file', async () => {
    const dir = await fs.mkdtemp(join(tmpdir(), 'svc-webhooks-types-'));
    const out = join(dir, 'webhook-types.ts');
    const schemasOut = join(dir, 'webhook-types.schemas.ts');
    await fs.writeFile(schemasOut, 'before');
    const busy = Object.assign(new Error(`EBUSY: resource busy or locked, rename '${schemasOut}.tmp' -> '${schemasOut}'`), { code: 'EBUSY' });
    const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
    vi.mocked(fs.rename).mockImplementation(async (from, to) => (to === schemasOut ? Promise.reject(busy) : actual.rename(from, to)));
    try {
      const run = await inProcessCli()(['types', join(CONTRACTS, 'rich.yaml'), '-o', out, '--schemas']);
      expect(run).toMatchObject({ code: 2, stdout: '', stderr: `svc-webhooks types: cannot write ${schemasOut}: EBUSY: resource busy or locked (${out} written; the rest is stale)\n` });
      expect(await fs.readFile(out, 'utf8')).toContain('interface ContractEventMap');
      expect(await fs.readFile(schemasOut, 'utf8')).toBe('before');
      expect((await fs.readdir(dir)).sort()).toEqual(['webhook-types.schemas.ts', 'webhook-types.ts']);
    } finally {
      vi.mocked(fs.rename).mockReset();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
