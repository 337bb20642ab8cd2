import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { buildCliFixtures, CLI_FIXTURES_DIR, type CliCase } from '../../../fixtures/cli/cases.js';
import { parseCapturedRequest } from '../../../src/cli/verify/captured-request.js';
import { diagnose, type Diagnosis } from '../../../src/cli/shared/diagnose.js';
import { parseHeaderText } from '../../../src/cli/shared/header-lines.js';
import { bodyVariants } from '../../../src/cli/shared/variants.js';

// Watched, to tell which diagnoses printed changed bodies, and made to fail once where a test asks.
vi.mock('../../../src/cli/shared/variants.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/cli/shared/variants.js')>();
  return { ...original, bodyVariants: vi.fn(original.bodyVariants) };
});

const read = (path: string): Buffer => readFileSync(new URL(path, CLI_FIXTURES_DIR));
const cases = JSON.parse(read('cases.json').toString()) as CliCase[];

function diagnoseCase(one: CliCase): Diagnosis {
  const request =
    'request' in one.files
      ? parseCapturedRequest(read(one.files.request), one.files.request)
      : { headers: parseHeaderText(read(one.files.headers).toString(), one.files.headers), body: read(one.files.body) };
  return diagnose({ ...request, secrets: one.secrets, nowMs: one.now * 1000 });
}

/** What the diagnosis must hold for each cause named in cases.json. */
function expectCause(diagnosis: Diagnosis, cause: string): void {
  const [kind, detail] = cause.split(':');
  if (kind === 'body') expect(diagnosis.signature).toStrictEqual({ kind: 'variant', change: detail });
  else if (kind === 'key') expect(diagnosis.signature).toStrictEqual({ kind: 'variant', mistake: detail });
  else if (kind === 'other_secret') expect(diagnosis.signature).toStrictEqual({ kind: 'other_secret' });
  else if (kind === 'missing_header') expect([diagnosis.missing, diagnosis.signature]).toEqual([['webhook-signature'], undefined]);
  else {
    expect(diagnosis.signature).toEqual({ kind: 'valid' });
    if (kind === 'clock') expect(diagnosis.behindSeconds).toBe(412);
    else if (kind === 'milliseconds') expect(diagnosis.timestampHeader).toMatch(/^\d{13}$/);
    else expect(kind).toBe('valid');
  }
}

describe('fixtures/cli', () => {
  it('holds what fixtures/cli/cases.ts produces (npm run fixtures)', () => {
    const { files } = buildCliFixtures();
    for (const [path, bytes] of files) expect(read(path).equals(bytes), path).toBe(true);
  });

  it.each(cases.map((one) => [one.name, one] as const))('%s: the verdict and the cause it was made with', (_name, one) => {
    const diagnosis = diagnoseCase(one);
    expect(diagnosis.error?.code ?? 'valid').toBe(one.verdict);
    expectCause(diagnosis, one.cause);
  });
});

const NOW = 1_795_000_000;
const ID = 'msg_diagnose';
const key32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes));
const secretOf = (key: Buffer): string => `whsec_${key.toString('base64')}`;
const nonEmptyObject = fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 });

function signedWith(key: Buffer, body: Buffer | string, extra: readonly string[] = []): Record<string, string> {
  const mac = createHmac('sha256', key).update(`${ID}.${NOW}.`).update(body).digest('base64');
  return { 'webhook-id': ID, 'webhook-timestamp': String(NOW), 'webhook-signature': [...extra, `v1,${mac}`].join(' ') };
}

const judge = (secret: string | string[], body: string, headers: Record<string, string>) =>
  diagnose({ body: Buffer.from(body), headers, secrets: [secret].flat(), nowMs: NOW * 1000 }).signature;

describe('diagnose', () => {
  it('finds a compact body that the receiver holds pretty-printed, and the reverse', () => {
    fc.assert(
      fc.property(key32, nonEmptyObject, (key, value) => {
        const compact = JSON.stringify(value);
        const pretty = JSON.stringify(JSON.parse(compact), null, 2);
        expect(judge(secretOf(key), pretty, signedWith(key, compact))).toEqual({ kind: 'variant', change: 'compact_json' });
        expect(judge(secretOf(key), compact, signedWith(key, pretty))).toEqual({ kind: 'variant', change: 'pretty_json_2' });
      }),
      { numRuns: 50 },
    );
  });

  it('blames another secret when no variant of key or body matches', () => {
    fc.assert(
      fc.property(key32, key32, fc.string(), (mine, theirs, body) => {
        fc.pre(!mine.equals(theirs));
        expect(judge(secretOf(mine), body, signedWith(theirs, body))).toEqual({ kind: 'other_secret' });
      }),
      { numRuns: 50 },
    );
  });

  it('names both mistakes when the key and the body are both wrong', () => {
    const secret = 'whsec_Ym90aC13cm9uZy1rZXktYW5kLWJvZHk=';
    const body = '{"id":"msg_diagnose","type":"webhook.test","data":{"object":{"id":"x"}}}';
    const pretty = JSON.stringify(JSON.parse(body), null, 4);
    expect(judge(secret, pretty, signedWith(Buffer.from(secret), body))).toEqual({ kind: 'variant', mistake: 'prefix_kept', change: 'compact_json' });
  });

  it('tries the mistaken forms of every secret of a rotation, and accepts a pair with one valid entry', () => {
    const [first, second] = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    const body = '{"a":1}';
    const viaSecond = signedWith(Buffer.from(secretOf(second)), body);
    expect(judge([secretOf(first), secretOf(second)], body, viaSecond)).toEqual({ kind: 'variant', mistake: 'prefix_kept' });
    const pair = signedWith(second, body, [signedWith(first, 'other body')['webhook-signature']!]);
    expect(judge(secretOf(second), body, pair)).toEqual({ kind: 'valid' });
  });

  it('prefers one thing wrong on the body to one on the key', () => {
    const key = Buffer.alloc(32, 3);
    const compact = '{"a":1}';
    const pretty = JSON.stringify(JSON.parse(compact), null, 2);
    const both = signedWith(key, compact, [signedWith(Buffer.from(secretOf(key)), pretty)['webhook-signature']!]);
    expect(judge(secretOf(key), pretty, both)).toStrictEqual({ kind: 'variant', change: 'compact_json' });
  });

  it("lets a caller's mistake through rather than calling it a verdict", () => {
    expect(() => diagnose({ body: Buffer.from('{}'), headers: {}, secrets: ['whsec_!'], nowMs: 0 })).toThrow(TypeError);
  });

  it('says when webhook-signature holds no v1 entry at all', () => {
    const headers = { ...signedWith(Buffer.alloc(32), '{}'), 'webhook-signature': 'v1=abc sha256=def' };
    expect(judge(secretOf(Buffer.alloc(32)), '{}', headers)).toEqual({ kind: 'no_v1_entry' });
  });

  it('judges the signature even when the clock refuses the timestamp', () => {
    const key = Buffer.alloc(32, 7);
    const diagnosis = diagnose({ body: Buffer.from('{}'), headers: signedWith(key, '{}'), secrets: [secretOf(key)], nowMs: (NOW - 900) * 1000 });
    expect([diagnosis.error?.code, diagnosis.behindSeconds, diagnosis.signature]).toEqual(['timestamp_too_new', -900, { kind: 'valid' }]);
  });
});

describe('diagnose: what it costs', () => {
  const key = Buffer.alloc(32, 9);
  const body = '{"id":"msg_diagnose","type":"webhook.test","data":{"object":{"id":"x"}}}';
  beforeEach(() => {
    vi.mocked(bodyVariants).mockClear();
  });

  it('prints no changed body for a request that verifies', () => {
    const diagnosis = diagnose({ body: Buffer.from(body), headers: signedWith(key, body), secrets: [secretOf(key)], nowMs: NOW * 1000 });
    expect([diagnosis.error, diagnosis.signature, diagnosis.event]).toEqual([undefined, { kind: 'valid' }, { id: 'msg_diagnose', type: 'webhook.test' }]);
    expect(bodyVariants).not.toHaveBeenCalled();
  });

  it('prints them once for a request that fails, and says which it left out past its bounds', () => {
    const deep = `{"id":"msg_diagnose","type":"webhook.test","data":${'['.repeat(6000)}${']'.repeat(6000)}}`;
    const diagnosis = diagnose({ body: Buffer.from(deep), headers: signedWith(Buffer.alloc(32, 1), deep), secrets: [secretOf(key)], nowMs: NOW * 1000 });
    expect([diagnosis.error?.code, diagnosis.signature, diagnosis.skipped]).toEqual([
      'invalid_signature',
      { kind: 'other_secret' },
      { changes: ['compact_json', 'pretty_json_2', 'pretty_json_4'], reason: 'depth' },
    ]);
    expect(bodyVariants).toHaveBeenCalledTimes(1);
  });

  it("gives the core's verdict alone when the search for a cause fails, and says so", () => {
    vi.mocked(bodyVariants).mockImplementationOnce(() => {
      throw new RangeError('Maximum call stack size exceeded');
    });
    const diagnosis = diagnose({ body: Buffer.from(body), headers: signedWith(Buffer.alloc(32, 1), body), secrets: [secretOf(key)], nowMs: NOW * 1000 });
    expect([diagnosis.error?.code, diagnosis.signature, diagnosis.failed]).toEqual(['invalid_signature', undefined, 'RangeError']);
  });
});
