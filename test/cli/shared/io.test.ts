import { Buffer } from 'node:buffer';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/shared/args.js';
import { streamIO, type InputStream } from '../../../src/cli/shared/io.js';

function streams(stdin: InputStream = new PassThrough()) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = (stream: PassThrough): string => String(stream.read() ?? '');
  return { io: streamIO({ stdin, stdout, stderr }), stdout: () => text(stdout), stderr: () => text(stderr) };
}

describe('streamIO', () => {
  it('writes each line to its own stream, ended by a newline', () => {
    const { io, stdout, stderr } = streams();
    io.out('first');
    io.out('');
    io.err('trouble');
    expect([stdout(), stderr()]).toEqual(['first\n\n', 'trouble\n']);
  });

  it('reads standard input to its end, chunks joined byte for byte', async () => {
    const stdin = new PassThrough();
    const { io } = streams(stdin);
    stdin.write(Buffer.from([0xc3]));
    stdin.end(Buffer.from([0x28, 0x0a]));
    expect([...(await io.stdin())]).toEqual([0xc3, 0x28, 0x0a]);
  });

  it('answers an empty body for an empty standard input', async () => {
    const stdin = new PassThrough();
    stdin.end();
    expect((await streams(stdin).io.stdin()).length).toBe(0);
  });

  it('refuses to wait on a terminal, without reading from it', async () => {
    const terminal = Object.assign(new PassThrough(), { isTTY: true });
    terminal.end('never read');
    const refusal = streams(terminal).io.stdin();
    await expect(refusal).rejects.toThrow(UsageError);
    await expect(refusal).rejects.toThrow('standard input is a terminal: give the body with @file, or pipe it in');
    expect(String(terminal.read())).toBe('never read');
  });

  it('names standard input when it is past the bound', async () => {
    const stdin = new PassThrough();
    stdin.end(Buffer.alloc(4 * 1024 * 1024 + 1));
    await expect(streams(stdin).io.stdin()).rejects.toThrow(new UsageError('standard input is larger than 4 MiB: that is no webhook'));
  });
});
