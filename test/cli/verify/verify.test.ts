/**
 * `svc-webhooks verify` in-process: the cause it names for each fixtures/cli
 * request, the ways it takes headers, body and captured requests, and the
 * clock it judges by.
 */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLI_FIXTURES_DIR, type CliCase } from '../../../fixtures/cli/cases.js';
import { runCli } from '../../../src/cli/run.js';

const fixture = (path: string): string => fileURLToPath(new URL(path, CLI_FIXTURES_DIR));
const cases = JSON.parse(readFileSync(fixture('cases.json'), 'utf8')) as CliCase[];

const KEY = Buffer.from('verify-test-key-0123456789abcdef');
const SECRET = `whsec_${KEY.toString('base64')}`;
const ID = 'msg_verify';
const NOW = 1_795_000_000;
const BODY = `{"id":"${ID}","type":"webhook.test","data":{"object":{"id":"we_1"}}}`;

/** The three headers for `body`, signed here with node:crypto alone. */
function signed(body = BODY, { id = ID, timestamp = String(NOW) } = {}): Record<string, string> {
  const mac = createHmac('sha256', KEY).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` };
}

const lines = (headers: Record<string, string>): string =>
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\n`)
    .join('');

async function verify(args: readonly string[], stdin = ''): Promise<{ status: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runCli(['verify', ...args], { out: (line) => out.push(line), err: (line) => err.push(line), stdin: async () => Buffer.from(stdin) });
  return { status, out, err };
}

const at = (seconds: number): string[] => ['--secret', SECRET, '--now', String(seconds)];
const VALID = [`valid: webhook.test ${ID}`, 'timestamp: on this clock (within the 300 s tolerance)'];

afterEach(() => {
  vi.useRealTimers();
});

/** The start of what verify says about each case: the valid line, or the cause line. */
const SAID = [
  ['valid', 'valid: call.missed msg_01JD2X0A1B2C3D4E5F6G7H8J9K'],
  ['body-pretty-printed', 'cause: the signature matches the body parsed and printed again as compact JSON, not the bytes given'],
  ['body-compacted', 'cause: the signature matches the body parsed and printed again as JSON indented with 2 spaces, not'],
  ['body-final-newline', 'cause: the signature matches the body without its final newline: '],
  ['secret-prefix-kept', 'cause: the signature was made with the whole secret, "whsec_" prefix included, '],
  ['secret-not-base64-decoded', 'cause: the signature was made with the part after "whsec_" used as UTF-8 text, not '],
  ['legacy-secret-base64-decoded', 'cause: the signature was made with this secret base64-decoded. '],
  ['clock-behind', 'cause: the signature is valid, but the timestamp is 412 s behind this clock, past the 300 s '],
  ['timestamp-in-milliseconds', 'cause: webhook-timestamp is in milliseconds: divided by 1000 it is within the tolerance.'],
  ['other-endpoint-secret', 'cause: the request was signed with a different secret, most likely another endpoint'],
  ['missing-signature-header', 'cause: the request has no webhook-signature header (spec section 5): '],
] as const;

describe('verify names the cause of each fixtures/cli request', () => {
  it.each(SAID)('%s', async (name, said) => {
    const one = cases.find((each) => each.name === name)!;
    const files = 'request' in one.files ? ['--request', `@${fixture(one.files.request)}`] : ['--headers', `@${fixture(one.files.headers)}`, '--body', `@${fixture(one.files.body)}`];
    const { status, out, err } = await verify([...one.secrets.flatMap((secret) => ['--secret', secret]), '--now', String(one.now), ...files]);
    expect(out[0]).toMatch(one.verdict === 'valid' ? /^valid: / : new RegExp(`^invalid: ${one.verdict}: `));
    expect(out[one.verdict === 'valid' ? 0 : 1]!.slice(0, said.length)).toBe(said);
    const seconds = one.cause === 'clock' ? '412 s behind this clock (past' : one.cause === 'milliseconds' ? '1793204999997 s ahead of this clock (past' : '3 s behind this clock (within';
    expect(out.at(-1)).toBe(`timestamp: ${seconds} the 300 s tolerance)`);
    expect(out).toHaveLength(one.verdict === 'valid' ? 2 : 3);
    expect([status, err]).toEqual([one.verdict === 'valid' ? 0 : 1, []]);
  });

  it('covers every case of cases.json', () => {
    expect(SAID.map(([name]) => name).sort()).toEqual(cases.map((one) => one.name).sort());
  });
});

describe('verify reads', () => {
  it('headers as "name: value" lines and a body, each as text', async () => {
    expect(await verify([...at(NOW), '--headers', lines(signed()), '--body', BODY])).toEqual({ status: 0, out: VALID, err: [] });
  });

  it('headers as a JSON object, case and repeats as a receiver gets them', async () => {
    const { 'webhook-signature': signature, ...rest } = signed();
    const headers = JSON.stringify({ ...rest, 'Webhook-Signature': ['v1,AAAA', signature] });
    expect(await verify([...at(NOW), '--headers', headers, '--body', BODY])).toEqual({ status: 0, out: VALID, err: [] });
  });

  it('headers from standard input with the body from a file, or the body from standard input', async () => {
    const body = fixture('valid/body.json');
    const one = cases.find((each) => each.name === 'valid')!;
    const fromStdin = await verify(['--secret', one.secrets[0]!, '--now', String(one.now), '--headers', '-', '--body', `@${body}`], readFileSync(fixture('valid/headers.txt'), 'utf8'));
    expect([fromStdin.status, fromStdin.out[0]]).toEqual([0, 'valid: call.missed msg_01JD2X0A1B2C3D4E5F6G7H8J9K']);
    expect(await verify([...at(NOW), '--headers', lines(signed()), '--body', '-'], BODY)).toEqual({ status: 0, out: VALID, err: [] });
  });

  it('a captured request from standard input', async () => {
    const capture = `POST /hooks HTTP/1.1\r\ncontent-length: ${BODY.length}\r\n${lines(signed()).replaceAll('\n', '\r\n')}\r\n${BODY}`;
    expect(await verify([...at(NOW), '--request', '-'], capture)).toEqual({ status: 0, out: VALID, err: [] });
  });

  it.each(['constructor', '__proto__', 'Constructor'])('a captured request with a header named %s, as any other header', async (name) => {
    const capture = `POST /hooks HTTP/1.1\r\n${name}: x\r\n${name}: y\r\ncontent-length: ${BODY.length}\r\n${lines(signed()).replaceAll('\n', '\r\n')}\r\n${BODY}`;
    expect(await verify([...at(NOW), '--request', '-'], capture)).toEqual({ status: 0, out: VALID, err: [] });
  });

  it('the secret from WEBHOOK_SECRET when no --secret is given', async () => {
    vi.stubEnv('WEBHOOK_SECRET', SECRET);
    try {
      expect(await verify(['--now', String(NOW), '--headers', lines(signed()), '--body', BODY])).toEqual({ status: 0, out: VALID, err: [] });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a timestamp that is no number, escaped: escape sequences in a request never reach the terminal', async () => {
    const result = await verify([...at(NOW), '--headers', lines(signed(BODY, { timestamp: '\u001b[2J' })), '--body', BODY]);
    expect(result.out.join('\n')).toContain('timestamp: "\\x1b[2J" is not Unix seconds');
    expect(result.out.join('\n')).not.toContain('\u001b');
  });

  it('an id, a type and a timestamp of 60 KB, cut short: a request cannot flood the terminal', async () => {
    const id = `msg_${'i'.repeat(60 * 1024)}`;
    const body = `{"id":"${id}","type":"t${'y'.repeat(60 * 1024)}","data":{"object":{"id":"we_1"}}}`;
    const valid = await verify([...at(NOW), '--headers', lines(signed(body, { id })), '--body', body]);
    expect(valid.out).toEqual([`valid: t${'y'.repeat(199)}… msg_${'i'.repeat(196)}…`, VALID[1]]);
    const stamp = await verify([...at(NOW), '--headers', lines(signed(BODY, { timestamp: 't'.repeat(60 * 1024) })), '--body', BODY]);
    expect(stamp.out.at(-1)).toBe(`timestamp: "${'t'.repeat(200)}…" is not Unix seconds`);
  });

  it('the clock as now when --now is not given', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime((NOW + 7) * 1000 + 400);
    const { status, out } = await verify(['--secret', SECRET, '--headers', lines(signed()), '--body', BODY]);
    expect([status, out[1]]).toEqual([0, 'timestamp: 7 s behind this clock (within the 300 s tolerance)']);
  });

  it('either secret of a rotation', async () => {
    const other = `whsec_${Buffer.from('another-key').toString('base64')}`;
    const { status, out } = await verify(['--secret', other, ...at(NOW), '--headers', lines(signed()), '--body', BODY]);
    expect([status, out]).toEqual([0, VALID]);
  });
});

describe('verify judges', () => {
  const judge = async (headers: Record<string, string>, body = BODY, now = NOW) => (await verify([...at(now), '--headers', JSON.stringify(headers), '--body', body])).out;

  it.each(['webhook-id', 'webhook-timestamp'])('a request without %s as missing that header, whatever its signature', async (name) => {
    const { [name]: _dropped, ...rest } = signed();
    const out = await judge(rest);
    expect(out.slice(0, 2)).toEqual([
      `invalid: missing_header: the ${name} header is missing or empty`,
      `cause: the request has no ${name} header (spec section 5): check that nothing on the way (a proxy, a framework) drops or renames headers.`,
    ]);
  });

  it.each([
    ['with a decimal point', '1795000000.5'],
    ['with a letter after it', '1795000000s'],
    ['with a letter before it', 't1795000000'],
    ['of 16 digits', '1795000000000000'],
  ])('a timestamp %s as not Unix seconds', async (_name, timestamp) => {
    expect(await judge(signed(BODY, { timestamp }))).toEqual([
      'invalid: invalid_timestamp: webhook-timestamp must be an integer number of seconds',
      'cause: the signature is valid, but webhook-timestamp is not a plain integer of Unix seconds.',
      `timestamp: "${timestamp}" is not Unix seconds`,
    ]);
  });

  it.each([
    ['with something after it', (entry: string) => `${entry}x`],
    ['with something before it', (entry: string) => `x${entry}`],
  ])('a v1 entry %s as no v1 entry at all', async (_name, spoil) => {
    const headers = signed();
    const out = await judge({ ...headers, 'webhook-signature': spoil(headers['webhook-signature']!) });
    expect(out[1]).toMatch(/^cause: webhook-signature holds no well-formed "v1,<base64>" entry/);
  });

  it('the well-formed entry among malformed ones', async () => {
    const headers = signed(BODY, { timestamp: String(NOW - 400) });
    const out = await judge({ ...headers, 'webhook-signature': `sha256=abc ${headers['webhook-signature']}` });
    expect(out[1]).toMatch(/^cause: the signature is valid, but the timestamp is 400 s behind this clock/);
  });

  it('repeated headers joined as the core joins them: webhook-id with ", ", webhook-signature with " "', async () => {
    const { 'webhook-signature': signature } = signed(BODY, { id: 'msg_a, msg_b', timestamp: String(NOW - 400) });
    const headers = { 'webhook-id': ['msg_a', 'msg_b'], 'webhook-timestamp': String(NOW - 400), 'webhook-signature': [signature, 'v1,AAAA'] };
    const out = await judge(headers as unknown as Record<string, string>);
    expect(out.slice(0, 2)).toEqual([
      'invalid: timestamp_too_old: webhook-timestamp is 400 s in the past; the tolerance is 300 s',
      expect.stringMatching(/^cause: the signature is valid, but the timestamp is 400 s behind this clock/),
    ]);
  });

  it("a validly signed body that is not the event's envelope by the core's reason", async () => {
    const out = await judge(signed('[1]'), '[1]');
    expect(out[0]).toMatch(/^invalid: invalid_payload: /);
    expect(out[1]).toBe(`cause: the signature is valid, but ${out[0]!.replace('invalid: invalid_payload: ', '')}.`);
  });
});

describe('verify refuses', () => {
  it.each([
    [['--request', '@x', '--headers', 'a: 1'], 'give either --request, or --headers and --body'],
    [['--request', '@x', '--body', '{}'], 'give either --request, or --headers and --body'],
    [['--headers', 'a: 1'], 'give --headers and --body, or --request'],
    [['--body', '{}'], 'give --headers and --body, or --request'],
    [['--headers', '-', '--body', '-'], 'only one of --headers and --body can be standard input'],
    [['--request', '-'], '--request: no blank line ends the headers'],
    [['--request', '@/nonexistent/request.http'], '--request: cannot read /nonexistent/request.http (ENOENT)'],
    [['--headers', '@/nonexistent/headers.txt', '--body', '{}'], '--headers: cannot read /nonexistent/headers.txt (ENOENT)'],
    [['--headers', 'a: 1', '--body', '@/nonexistent/body.json'], '--body: cannot read /nonexistent/body.json (ENOENT)'],
    [['--headers', 'no colon', '--body', '{}'], '--headers: not a "name: value" header line: no colon'],
    [['--now', 'soon', '--headers', 'a: 1', '--body', '{}'], '--now must be a whole number of at least 0'],
    [['--headers', 'a: 1', '--body', '{}', 'extra'], '1 unexpected argument where this command takes none (not shown, in case one is a secret: give a secret with --secret or WEBHOOK_SECRET)'],
  ])('%j', async (args, message) => {
    const { status, out, err } = await verify(['--secret', SECRET, ...args], 'no blank line');
    expect({ status, out, err }).toEqual({ status: 2, out: [], err: [`svc-webhooks verify: ${message}`, 'Run "svc-webhooks verify --help" for usage.'] });
  });
});
