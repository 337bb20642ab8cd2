/**
 * Installs the packed tarball alone (`npm install <tarball>`: no peers, no
 * types) into a temporary project, then sends a signed event and a tampered
 * one through the handler entries as installed: the Fetch handler served by
 * Node's HTTP server, Bun.serve and Deno.serve, the Lambda handler with
 * API Gateway REST (1.0), HTTP API (2.0) and ALB events, the Azure
 * handler with a request shaped as Azure's, and the h3 handler with an event
 * shaped as h3 2's, on every runtime. Each must reach the
 * handler once and refuse the tampered copy with 400 invalid_signature.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lambdaEvent, type LambdaSource } from '../helpers/lambda-events.js';
import { SECRET, signedRequest } from '../helpers/signed-request.js';
import { nodeBinary, OTHER_NODES } from '../helpers/node-versions.js';
import { PACKAGE_ROOT, packTarball } from './pack.js';

const BIN = join(PACKAGE_ROOT, 'node_modules/.bin');
const LAMBDA_SOURCES: readonly LambdaSource[] = ['api-gateway-rest', 'http-api', 'alb'];

// Runs as plain JavaScript on Node, Bun and Deno alike: the package as installed, nothing else.
const RECEIVER = `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { sign } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/fetch';

const SECRET = ${JSON.stringify(SECRET)};
const runtime = globalThis.Bun ? 'bun' : globalThis.Deno ? 'deno' : \`node\${process.versions.node.split('.')[0]}\`;
const lines = [];
let failed = 0;
const check = (name, ok, detail) => {
  if (!ok) failed++;
  lines.push(\`\${ok ? 'ok  ' : 'FAIL'} \${runtime}: \${name}\${ok ? '' : \` (\${detail})\`}\`);
};

/** Serves a Fetch handler with the runtime's own server; answers its port and a way to stop it. */
async function serve(handler) {
  if (runtime === 'bun') {
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handler });
    return { port: server.port, close: () => server.stop(true) };
  }
  if (runtime === 'deno') {
    const server = Deno.serve({ port: 0, hostname: '127.0.0.1', onListen() {} }, handler);
    return { port: server.addr.port, close: () => server.shutdown() };
  }
  // Node's HTTP server, bridged to Fetch by hand: the body streamed in, the answer written out.
  const server = createServer(async (req, res) => {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    const body = new ReadableStream({
      async start(controller) {
        for await (const chunk of req) controller.enqueue(new Uint8Array(chunk));
        controller.close();
      },
    });
    const response = await handler(new Request(\`http://127.0.0.1\${req.url}\`, { method: req.method, headers, body, duplex: 'half' }));
    res.writeHead(response.status, [...response.headers].flat());
    res.end(new Uint8Array(await response.arrayBuffer()));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function fetchHandler() {
  const calls = [];
  const { port, close } = await serve(verifyWebhook({ secret: SECRET }, (event, { id }) => void calls.push(id)));
  try {
    const id = 'evt_installed_fetch';
    const body = JSON.stringify({ id, type: 'call.missed', data: { object: { id: 'call_1' } } });
    const headers = { ...sign(body, { id, timestamp: new Date(), secret: SECRET }), 'content-type': 'application/json' };
    const post = (payload) => fetch(\`http://127.0.0.1:\${port}/webhooks\`, { method: 'POST', body: payload, headers });
    const signed = await post(body);
    check('Fetch handler: a signed event is answered 204', signed.status === 204, signed.status);
    await signed.arrayBuffer();
    const tampered = await post(body.replace('call_1', 'call_2'));
    const code = (await tampered.json()).error?.code;
    check('Fetch handler: a tampered event is answered 400 invalid_signature', tampered.status === 400 && code === 'invalid_signature', \`\${tampered.status} \${code}\`);
    check('Fetch handler: the handler ran once', calls.length === 1 && calls[0] === id, calls.join());
  } finally {
    await close();
  }
}

async function lambdaHandler() {
  const { verifyWebhook: lambdaWebhook } = await import('svc-webhooks/lambda');
  const events = JSON.parse(readFileSync('lambda-events.json', 'utf8'));
  for (const { source, signed, tampered } of events) {
    const calls = [];
    const handler = lambdaWebhook({ secret: SECRET }, (event, { id }) => void calls.push(id));
    const accepted = await handler(signed, {});
    check(\`Lambda handler, \${source}: a signed event is answered 204\`, accepted.statusCode === 204, accepted.statusCode);
    const refused = await handler(tampered, {});
    const code = JSON.parse(refused.body).error?.code;
    check(\`Lambda handler, \${source}: a tampered event is answered 400 invalid_signature\`, refused.statusCode === 400 && code === 'invalid_signature', \`\${refused.statusCode} \${code}\`);
    check(\`Lambda handler, \${source}: the handler ran once\`, calls.length === 1, calls.join());
  }
}

// Without @azure/functions installed: a Fetch Request reads as Azure's HttpRequest does (headers, body, bodyUsed).
async function azureHandler() {
  const { verifyWebhook: azureWebhook } = await import('svc-webhooks/azure');
  const calls = [];
  const handler = azureWebhook({ secret: SECRET }, (event, { id }) => void calls.push(id));
  const id = 'evt_installed_azure';
  const body = JSON.stringify({ id, type: 'call.missed', data: { object: { id: 'call_1' } } });
  const headers = { ...sign(body, { id, timestamp: new Date(), secret: SECRET }), 'content-type': 'application/json' };
  const request = (payload) => Object.assign(new Request('http://127.0.0.1/api/webhooks', { method: 'POST', body: payload, headers }), { params: {} });
  const accepted = await handler(request(body), { invocationId: '1' });
  check('Azure handler: a signed event is answered 204', accepted.status === 204, accepted.status);
  const refused = await handler(request(body.replace('call_1', 'call_2')), { invocationId: '2' });
  const code = JSON.parse(refused.body).error?.code;
  check('Azure handler: a tampered event is answered 400 invalid_signature', refused.status === 400 && code === 'invalid_signature', \`\${refused.status} \${code}\`);
  check('Azure handler: the handler ran once', calls.length === 1 && calls[0] === id, calls.join());
}

// Without h3 installed: an event shaped as h3 2's, its Web request in req.
async function h3Handler() {
  const { verifyWebhook: h3Webhook } = await import('svc-webhooks/h3');
  const calls = [];
  const handler = h3Webhook({ secret: SECRET }, (_event, { request }) => void calls.push(request.context.webhook?.id ?? 'none'));
  const id = 'evt_installed_h3';
  const body = JSON.stringify({ id, type: 'call.missed', data: { object: { id: 'call_1' } } });
  const headers = { ...sign(body, { id, timestamp: new Date(), secret: SECRET }), 'content-type': 'application/json' };
  const event = (payload) => ({ req: new Request('http://127.0.0.1/webhooks', { method: 'POST', body: payload, headers }), context: {} });
  const accepted = await handler(event(body));
  check('h3 handler: a signed event is answered 204', accepted.status === 204, accepted.status);
  const refused = await handler(event(body.replace('call_1', 'call_2')));
  const code = (await refused.json()).error?.code;
  check('h3 handler: a tampered event is answered 400 invalid_signature', refused.status === 400 && code === 'invalid_signature', \`\${refused.status} \${code}\`);
  check('h3 handler: the handler ran once, with the delivery on event.context.webhook', calls.length === 1 && calls[0] === id, calls.join());
}

await fetchHandler();
await h3Handler();
// The Lambda and Azure handlers run on Node alone.
if (runtime.startsWith('node')) {
  await lambdaHandler();
  await azureHandler();
}
for (const line of lines) console.log(line);
console.log(\`\${runtime}: \${lines.length - failed} passed, \${failed} failed\`);
`;

const { tarball } = packTarball();
const project = mkdtempSync(join(tmpdir(), 'svc-webhooks-installed-'));
let failed = 0;
try {
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'installed', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', tarball], { cwd: project, stdio: ['ignore', 'ignore', 'inherit'] });
  const events = LAMBDA_SOURCES.map((source) => {
    const request = signedRequest({ id: `evt_installed_${source}`, timestamp: Math.floor(Date.now() / 1000) });
    const tampered = { ...request, body: request.body.replace('obj_evt', 'obj_other') };
    return { source, signed: lambdaEvent(source, request), tampered: lambdaEvent(source, tampered) };
  });
  writeFileSync(join(project, 'lambda-events.json'), JSON.stringify(events));
  writeFileSync(join(project, 'receive.mjs'), RECEIVER);
  const otherNodes = await Promise.all(OTHER_NODES.map(async (major) => [major, await nodeBinary(major)] as const));
  const runtimes: ReadonlyArray<readonly [string, readonly string[]]> = [
    [`node${process.versions.node.split('.')[0]}`, [process.execPath, 'receive.mjs']],
    ...otherNodes.map(([major, binary]) => [`node${major}`, [binary, 'receive.mjs']] as const),
    ['bun', [join(BIN, 'bun'), 'receive.mjs']],
    ['deno', [join(BIN, 'deno'), 'run', '--quiet', '--no-lock', '--allow-net=127.0.0.1', '--allow-read', 'receive.mjs']],
  ];
  for (const [runtime, [command, ...args]] of runtimes) {
    try {
      const output = execFileSync(command!, args, { cwd: project, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
      process.stdout.write(output);
      if (!output.trimEnd().endsWith(`${runtime}: ${output.match(/^ok /gm)?.length ?? 0} passed, 0 failed`)) failed++;
    } catch (error) {
      console.log(`FAIL ${runtime}: ${error instanceof Error ? error.message : String(error)}`);
      failed++;
    }
  }
} finally {
  rmSync(project, { recursive: true, force: true });
}
if (failed > 0) {
  console.error('installed: failed');
  process.exitCode = 1;
}
