/**
 * A recorded delivery as a curl command, run by POSIX shells (dash as `sh`,
 * and bash) with the real curl against a receiver that records what it
 * gets: the same bytes and end-to-end headers come in, whatever quotes,
 * substitutions, escapes and bytes a sender put in them, and nothing of
 * theirs runs.
 */
import { Buffer } from 'node:buffer';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { curlCommand } from '../../../src/cli/dev/curl.js';
import { withRecordingReceiver } from '../delivery-scenarios.js';

const run = promisify(execFile);

/** A shell's substitutions, quotes and escapes, each of which makes `touched` if the shell reads it as code. */
const hostile = (touched: string): string => `it's "$(touch ${touched}1)" \`touch ${touched}2\` \\' '; touch ${touched}3; ' $HOME %s %% \\n`;

describe('svc-webhooks dev: a delivery as curl', () => {
  it.each(['sh', 'bash'])('sends, run by %s, the body and headers as recorded, quotes and substitutions included, and runs none of them', async (shell) => {
    const folder = await mkdtemp(join(tmpdir(), 'dev-curl-'));
    const touched = join(folder, 'touched');
    const text = `{"id":"msg_1","note":${JSON.stringify(hostile(touched))}}\n\t"é 😀"\r\n`;
    // Every byte there is: NUL, invalid UTF-8, the quote, the backslash and the percent sign among them.
    const binary = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      for (const body of [Buffer.from(text), binary, Buffer.from('@/etc/passwd'), Buffer.alloc(0)]) {
        const headers = {
          host: 'tunnel.example',
          connection: 'keep-alive',
          'content-length': String(body.length),
          'content-type': 'application/json',
          'webhook-id': hostile(touched),
          'x-empty': '',
        };
        await run(shell, ['-c', curlCommand(url, headers, body)], { cwd: folder });
        const got = received.at(-1)!;
        expect(got.body.equals(body)).toBe(true);
        expect(got.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': hostile(touched), 'x-empty': '' });
        // The hop's headers are curl's own.
        expect([got.headers.host, got.headers['content-length']]).toEqual([new URL(url).host, String(body.length)]);
      }
    });
    for (const n of [1, 2, 3]) expect(existsSync(`${touched}${n}`)).toBe(false);
  });

  it('sends no Content-Type when the recorded request had none', async () => {
    await withRecordingReceiver([{ status: 204 }], async ({ url, received }) => {
      await run('sh', ['-c', curlCommand(url, { 'webhook-id': 'msg_1' }, Buffer.from('a=b'))]);
      expect(received[0]!.headers['content-type']).toBeUndefined();
      expect(received[0]!.body.toString()).toBe('a=b');
    });
  });

  it('writes a text body as it is, and other bytes as octal escapes', () => {
    expect(curlCommand('http://127.0.0.1:1/webhooks', { 'content-type': 'application/json', 'webhook-id': "it's" }, Buffer.from("{'a': 1}"))).toBe(
      [`printf '%s' '{'\\''a'\\'': 1}' | curl 'http://127.0.0.1:1/webhooks'`, `-H 'content-type: application/json'`, `-H 'webhook-id: it'\\''s'`, '--data-binary @-'].join(' \\\n  '),
    );
    expect(curlCommand('http://127.0.0.1:1/webhooks', { 'content-type': 'x' }, Buffer.from([0x41, 0, 0x27, 0x5c, 0x25, 0xff, 0x0a]))).toMatch(/^printf 'A\\000\\047\\134\\045\\377\\012' \| curl /);
  });

  it.each([
    // Not UTF-8: the space and the tilde as they are, DEL escaped.
    ['bytes that are not UTF-8', [0xff, 0x20, 0x7e, 0x7f], `printf '\\377 ~\\177'`],
    // Each byte kept: no replacement character for a broken sequence.
    ['a broken UTF-8 sequence', [0x61, 0xc3], `printf 'a\\303'`],
    // A byte order mark is the body's own first bytes, not to be dropped.
    ['a body that starts with a byte order mark', [0xef, 0xbb, 0xbf, 0x7b, 0x7d], `printf '%s' '\ufeff{}'`],
  ])('writes %s byte for byte', (_name, bytes, printf) => {
    expect(curlCommand('http://127.0.0.1:1/webhooks', { 'content-type': 'x' }, Buffer.from(bytes)).split(' | ')[0]).toBe(printf);
  });
});
