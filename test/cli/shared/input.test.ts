/** How an option names its bytes: text, `@file`, or `-` for standard input. */
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/shared/args.js';
import { readInput } from '../../../src/cli/shared/input.js';
import type { CliIO } from '../../../src/cli/shared/io.js';

const STDIN = Buffer.from([0xff, 0x00, 0x7b]);
const io: CliIO = { out: () => {}, err: () => {}, stdin: async () => STDIN };
const scratch = mkdtempSync(join(tmpdir(), 'svc-webhooks-input-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('readInput past 4 MiB', () => {
  it('refuses a file that never ends, having read no more than the bound', async () => {
    await expect(readInput('@/dev/zero', 'request', io)).rejects.toThrow(new UsageError('--request @/dev/zero is larger than 4 MiB: that is no webhook'));
  });
});

describe('readInput', () => {
  it('reads standard input for "-"', async () => {
    expect(await readInput('-', 'body', io)).toBe(STDIN);
  });

  it('takes any other text as its UTF-8 bytes, an "@" inside included', async () => {
    expect((await readInput('{"name":"Zoë"}', 'data', io)).equals(Buffer.from('{"name":"Zoë"}', 'utf8'))).toBe(true);
    expect((await readInput('a@b', 'data', io)).toString()).toBe('a@b');
    expect((await readInput('', 'data', io)).length).toBe(0);
  });

  it('reads the file after "@" byte for byte', async () => {
    const file = join(scratch, 'body.bin');
    writeFileSync(file, Buffer.from([0xc3, 0x28, 0x0a]));
    expect(await readInput(`@${file}`, 'body', io)).toEqual(Buffer.from([0xc3, 0x28, 0x0a]));
  });

  it('refuses a file it cannot read as a usage error naming the option, the path and the reason', async () => {
    const missing = join(scratch, 'missing.json');
    await expect(readInput(`@${missing}`, 'data', io)).rejects.toThrow(new UsageError(`--data: cannot read ${missing} (ENOENT)`));
    await expect(readInput(`@${scratch}`, 'body', io)).rejects.toThrow(new UsageError(`--body: cannot read ${scratch} (EISDIR)`));
    await expect(readInput(`@${missing}`, 'data', io)).rejects.toBeInstanceOf(UsageError);
  });
});
