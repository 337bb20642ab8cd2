/**
 * The contract as `svc-webhooks types` reads it, from small contracts
 * written for each case: which webhooks become events (the method, the
 * JSON media type), the event type each carries, and the warnings about
 * an envelope the contract does not require or a type not written as one.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_CONTRACT_BYTES, nameOf, readContract, type Contract } from '../../../src/cli/shared/contract.js';
import { ContractError } from '../../../src/cli/shared/contract-error.js';
import { typesFolder } from '../../helpers/contract-types.js';

const HEAD = "openapi: 3.1.0\ninfo: { title: Messaging and Calling Service, version: '1' }\npaths: {}\n";

/** The contract whose `webhooks` section is the YAML `webhooks`, with `rest` after it. */
async function contract(webhooks: string, rest = ''): Promise<string> {
  const file = join(await typesFolder(), 'openapi.yaml');
  await writeFile(file, `${HEAD}webhooks:${webhooks}\n${rest}`);
  return file;
}

/** A webhook `name` whose operations are `operations`, each `[method, media type, schema]`. */
function webhook(name: string, ...operations: Array<[string, string, string]>): string {
  const body = operations.map(([method, media, schema]) => `    ${method}:\n      requestBody:\n        content:\n          ${JSON.stringify(media)}:${schema === '' ? ' {}' : `\n            schema: ${schema}`}`);
  return `\n  ${JSON.stringify(name)}:\n${body.join('\n')}`;
}

// A payload that requires the whole envelope, of event type `type` (given as a schema).
const envelope = (type: string): string => `{ type: object, required: [id, type, data], properties: { id: { type: string }, type: ${type}, data: ${DATA} } }`;
const DATA = '{ type: object, required: [object], properties: { object: { type: object, required: [id], properties: { id: { type: string } } } } }';

const read = async (webhooks: string, rest?: string): Promise<Omit<Contract, 'document'>> => {
  const { events, warnings } = await readContract(await contract(webhooks, rest));
  return { events, warnings };
};

describe('the contract svc-webhooks types reads', () => {
  it("takes each webhook's post, put or patch, the first with a JSON body in that order, never another method", async () => {
    const { events, warnings } = await read(
      webhook('call.held', ['put', 'application/json', envelope('{ const: call.held }')]) +
        webhook('call.parked', ['patch', 'application/json', envelope('{ const: call.parked }')], ['put', 'text/plain', '{ type: string }']) +
        webhook('call.ringing', ['put', 'application/json', envelope('{ const: call.ringing.put }')], ['post', 'application/json', envelope('{ const: call.ringing }')]) +
        webhook('call.queued', ['post', 'application/json', '']) +
        webhook('call.queued.late', ['post', 'text/plain', '{ type: string }'], ['patch', 'application/json', envelope('{ const: call.queued.late }')]) +
        webhook('call.fetched', ['get', 'application/json', envelope('{ const: call.fetched }')], ['delete', 'application/json', envelope('{ const: call.fetched }')]),
    );
    expect(events.map(({ type, method }) => [type, method])).toEqual([
      ['call.held', 'put'],
      ['call.parked', 'patch'],
      ['call.ringing', 'post'],
      ['call.queued.late', 'patch'],
    ]);
    // A JSON media type without a schema is no payload.
    expect(warnings).toEqual(['#/webhooks/call.queued has no JSON request body: left out', '#/webhooks/call.fetched has no JSON request body: left out']);
  });

  it('takes application/json and any +json media type, in any letter case and with parameters, and no other', async () => {
    const { events, warnings } = await read(
      webhook('call.missed', ['post', 'application/vnd.service.v2+json', envelope('{ const: call.missed }')]) +
        webhook('call.held', ['post', 'Application/JSON; charset=utf-8', envelope('{ const: call.held }')]) +
        webhook('call.parked', ['post', 'application/problem+json', envelope('{ const: call.parked }')]) +
        webhook('call.lines', ['post', 'application/jsonl', envelope('{ const: call.lines }')]) +
        webhook('call.text', ['post', 'text/json', envelope('{ const: call.text }')]) +
        webhook('call.plus', ['post', 'application/+json', envelope('{ const: call.plus }')]) +
        webhook('call.x', ['post', 'application/x-json', envelope('{ const: call.x }')]) +
        webhook('call.framed', ['post', 'x-application/json', envelope('{ const: call.framed }')]) +
        webhook('call.either', ['post', 'text/plain', '{ type: string }'], ['put', 'application/json', envelope('{ const: call.either }')]),
    );
    expect(events.map(({ type, mediaType, pointer }) => [type, mediaType, pointer])).toEqual([
      ['call.missed', 'application/vnd.service.v2+json', '#/webhooks/call.missed/post/requestBody/content/application~1vnd.service.v2+json/schema'],
      ['call.held', 'Application/JSON; charset=utf-8', '#/webhooks/call.held/post/requestBody/content/Application~1JSON; charset=utf-8/schema'],
      ['call.parked', 'application/problem+json', '#/webhooks/call.parked/post/requestBody/content/application~1problem+json/schema'],
      ['call.either', 'application/json', '#/webhooks/call.either/put/requestBody/content/application~1json/schema'],
    ]);
    expect(warnings.map((warning) => warning.split(' ')[0])).toEqual(['call.lines', 'call.text', 'call.plus', 'call.x', 'call.framed'].map((name) => `#/webhooks/${name}`));
  });

  it('leaves out, with a warning, a webhook that is no object or has no request body', async () => {
    const { events, warnings } = await read(
      '\n  call.none: null\n  call.text: a string\n  call.list: [1]\n  call.bare:\n    post:\n      responses: { "204": { description: Taken } }\n  call.empty:\n    post:\n      requestBody: { description: none }' +
        '\n  call.blank:\n    post:\n      requestBody:\n        content:\n          application/json: null' +
        webhook('call.missed', ['post', 'application/json', envelope('{ const: call.missed }')]),
    );
    expect(events.map(({ name }) => name)).toEqual(['call.missed']);
    expect(warnings).toEqual(['call.none', 'call.text', 'call.list', 'call.bare', 'call.empty', 'call.blank'].map((name) => `#/webhooks/${name} has no JSON request body: left out`));
  });

  it('keeps in the document only the webhooks it takes, so that the generators never meet one it left out', async () => {
    const { document } = await readContract(await contract('\n  call.none: null' + webhook('call.missed', ['post', 'application/json', envelope('{ const: call.missed }')])));
    expect(Object.keys(document.webhooks as object)).toEqual(['call.missed']);
  });

  it('takes the first JSON media type that has a schema', async () => {
    const { events } = await read(
      '\n  call.missed:\n    post:\n      requestBody:\n        content:\n          application/json: {}\n          application/vnd.service+json:\n            schema: ' + envelope('{ const: call.missed }'),
    );
    expect(events.map(({ mediaType }) => mediaType)).toEqual(['application/vnd.service+json']);
  });

  it("takes the event type the payload fixes, a const or a single enum value, even behind $refs, and else the webhook's name", async () => {
    const { events } = await read(
      webhook('constant', ['post', 'application/json', envelope('{ const: call.missed }')]) +
        webhook('single', ['post', 'application/json', envelope('{ type: string, enum: [message.received] }')]) +
        webhook('referred', ['post', 'application/json', '{ $ref: "#/components/schemas/Referred" }']) +
        webhook('escaped', ['post', 'application/json', envelope("{ $ref: '#/x-types/voice~1mail~0received' }")]) +
        webhook('two.values', ['post', 'application/json', envelope('{ type: string, enum: [call.held, call.parked] }')]) +
        webhook('not.text', ['post', 'application/json', envelope('{ const: 7 }')]) +
        webhook('no.text', ['post', 'application/json', envelope('{ enum: [7] }')]) +
        webhook('open.type', ['post', 'application/json', envelope('{ type: string }')]) +
        webhook('no.properties', ['post', 'application/json', '{ type: object }']) +
        webhook('any.payload', ['post', 'application/json', 'true']),
      `components:\n  schemas:\n    Referred: ${envelope("{ $ref: '#/components/schemas/TranscriptType' }")}\n    TranscriptType: { $ref: '#/components/schemas/TranscriptConst' }\n    TranscriptConst: { const: transcript.ready }\nx-types:\n  voice/mail~received: { const: voicemail.received }\n`,
    );
    expect(events.map(({ name, type }) => [name, type])).toEqual([
      ['constant', 'call.missed'],
      ['single', 'message.received'],
      ['referred', 'transcript.ready'],
      ['escaped', 'voicemail.received'],
      ['two.values', 'two.values'],
      ['not.text', 'not.text'],
      ['no.text', 'no.text'],
      ['open.type', 'open.type'],
      ['no.properties', 'no.properties'],
      ['any.payload', 'any.payload'],
    ]);
  });

  it('leaves out, with a warning naming where, an event type not written as one: ContractEventMap never gets it', async () => {
    const { events, warnings } = await read(
      webhook('callMissed', ['post', 'application/json', envelope('{ type: string }')]) +
        webhook('legacy/call~missed', ['post', 'application/json', envelope('{ type: string }')]) +
        webhook('call.held', ['post', 'application/json', envelope('{ const: call.held }')]),
    );
    expect(events.map(({ type }) => type)).toEqual(['call.held']);
    expect(warnings).toEqual([
      '#/webhooks/callMissed/post/requestBody/content/application~1json/schema: the event type "callMissed" is not written as one (lower-case words joined by dots): left out, since a handler for it is refused at run time',
      // A JSON pointer escapes "~" and "/".
      '#/webhooks/legacy~1call~0missed/post/requestBody/content/application~1json/schema: the event type "legacy/call~missed" is not written as one (lower-case words joined by dots): left out, since a handler for it is refused at run time',
    ]);
  });

  it('warns about each field of the envelope a payload does not require as a string, all in one line', async () => {
    const gaps = (schema: string, rest?: string): Promise<string[]> =>
      read(webhook('call.missed', ['post', 'application/json', schema]), rest).then(({ warnings }) =>
        warnings.map((warning) => warning.replace("#/webhooks/call.missed/post/requestBody/content/application~1json/schema does not require the envelope's ", '')),
      );
    const typed = '{ const: call.missed }';
    expect(await gaps('{ type: object }')).toEqual(['"id", "type", "data.object.id": generated with the envelope added']);
    expect(await gaps('{ type: object, required: [id, type, data] }')).toEqual(['"id", "type", "data.object.id": generated with the envelope added']);
    expect(await gaps('true')).toEqual(['"id", "type", "data.object.id": generated with the envelope added']);
    expect(await gaps(`{ type: object, required: [type, data], properties: { id: { type: string }, type: ${typed}, data: ${DATA} } }`)).toEqual([
      '"id": generated with the envelope added',
    ]);
    expect(await gaps(`{ type: object, required: [id, data], properties: { id: { type: string }, type: ${typed}, data: ${DATA} } }`)).toEqual([
      '"type": generated with the envelope added',
    ]);
    expect(await gaps(`{ type: object, required: [id, type], properties: { id: { type: string }, type: ${typed}, data: ${DATA} } }`)).toEqual([
      '"data.object.id": generated with the envelope added',
    ]);
    // Required, but not as a string.
    expect(await gaps(`{ type: object, required: [id, type, data], properties: { id: { type: integer }, type: ${typed}, data: ${DATA} } }`)).toEqual([
      '"id": generated with the envelope added',
    ]);
    expect(await gaps(`{ type: object, required: [id, type, data], properties: { id: { enum: [a, 1] }, type: ${typed}, data: ${DATA} } }`)).toEqual([
      '"id": generated with the envelope added',
    ]);
    expect(await gaps(`{ type: object, required: [id, type, data], properties: { id: { type: integer, enum: [a] }, type: ${typed}, data: ${DATA} } }`)).toEqual([
      '"id": generated with the envelope added',
    ]);
    expect(await gaps(`{ type: object, required: [id, type, data], properties: { id: { type: string }, type: ${typed}, data: { type: object, required: [object], properties: { object: { type: object, properties: { id: { type: string } } } } } } }`)).toEqual([
      '"data.object.id": generated with the envelope added',
    ]);
    expect(await gaps(`{ type: object, required: [id, type, data], properties: { id: { type: string }, type: ${typed}, data: { type: object, properties: { object: { type: object, required: [id], properties: { id: { type: string } } } } } } }`)).toEqual([
      '"data.object.id": generated with the envelope added',
    ]);
    // A const or an enum of strings is a string, and a field may be behind a $ref.
    expect(await gaps(`{ type: object, required: [id, type, data], properties: { id: { enum: [a, b] }, type: ${typed}, data: { $ref: '#/components/schemas/Data' } } }`, `components:\n  schemas:\n    Data: ${DATA}\n`)).toEqual([]);
  });

  it.each([
    ['an empty webhooks section', ' {}'],
    ['a webhooks section that is a list', ' [1]'],
  ])('refuses %s: it describes no event', async (_name, webhooks) => {
    await expect(readContract(await contract(webhooks))).rejects.toThrow(
      new ContractError('openapi.yaml has no webhooks section: it describes no event (OpenAPI 3.1 "webhooks")'),
    );
  });

  it('names the contract by its file name alone, or by all of what was given when that ends in a slash', async () => {
    expect(nameOf('/srv/api/contracts/openapi.yaml')).toBe('openapi.yaml');
    expect(nameOf('openapi.yaml')).toBe('openapi.yaml');
    expect(nameOf(new URL('file:///srv/api/openapi.json'))).toBe('openapi.json');
    expect(nameOf('contracts/')).toBe('contracts/');
    const folder = `${await typesFolder()}/`;
    await expect(readContract(folder)).rejects.toThrow(`${folder} cannot be read: `);
  });

  it('is a ContractError by name, so that the command tells it in one line', () => {
    expect(new ContractError('x').name).toBe('ContractError');
  });

  it('follows a $ref on the path item and on the request body, and points at the schema where it is', async () => {
    const { events, warnings } = await read(
      "\n  call.missed:\n    $ref: '#/components/pathItems/CallMissed'\n  message.received:\n    post:\n      requestBody:\n        $ref: '#/components/requestBodies/Message'",
      `components:\n  schemas:\n    Message: ${envelope('{ const: message.received }')}\n  requestBodies:\n    Message:\n      content:\n        application/json:\n          schema: { $ref: '#/components/schemas/Message' }\n` +
        `  pathItems:\n    CallMissed:\n      post:\n        requestBody:\n          content:\n            application/json:\n              schema: ${envelope('{ const: call.missed }')}\n`,
    );
    expect(warnings).toEqual([]);
    expect(events.map(({ type, name, pointer }) => [type, name, pointer])).toEqual([
      ['call.missed', 'call.missed', '#/components/pathItems/CallMissed/post/requestBody/content/application~1json/schema'],
      ['message.received', 'message.received', '#/components/requestBodies/Message/content/application~1json/schema'],
    ]);
  });

  it('refuses a contract none of whose webhooks is an event, saying why: the warnings would go unheard', async () => {
    await expect(read(webhook('call.missed', ['post', 'text/plain', '{ type: string }']) + webhook('callHeld', ['post', 'application/json', envelope('{ type: string }')]))).rejects.toThrow(
      new ContractError(
        'openapi.yaml describes no event it can use: #/webhooks/call.missed has no JSON request body: left out; ' +
          '#/webhooks/callHeld/post/requestBody/content/application~1json/schema: the event type "callHeld" is not written as one (lower-case words joined by dots): left out, since a handler for it is refused at run time',
      ),
    );
  });

  it('finds the event type and the envelope through allOf, nested and behind $refs', async () => {
    const parts = `{ allOf: [{ $ref: '#/components/schemas/Envelope' }, { allOf: [{ type: object, properties: { type: { $ref: '#/components/schemas/Missed' } } }] }] }`;
    const envelopeOnly = `{ type: object, required: [id, type, data], properties: { id: { type: string }, type: { type: string }, data: ${DATA} } }`;
    const { events, warnings } = await read(
      webhook('callMissed', ['post', 'application/json', parts]) +
        // Required in one part, described in another.
        webhook('callHeld', ['post', 'application/json', `{ allOf: [{ required: [id, type, data] }, { properties: { id: { type: string }, type: { const: call.held }, data: ${DATA} } }] }`]) +
        webhook('callParked', ['post', 'application/json', `{ allOf: [{ properties: { type: { const: call.parked } } }] }`]),
      `components:\n  schemas:\n    Envelope: ${envelopeOnly}\n    Missed: { const: call.missed }\n`,
    );
    expect(events.map(({ name, type }) => [name, type])).toEqual([
      ['callMissed', 'call.missed'],
      ['callHeld', 'call.held'],
      ['callParked', 'call.parked'],
    ]);
    expect(warnings).toEqual([
      `#/webhooks/callParked/post/requestBody/content/application~1json/schema does not require the envelope's "id", "type", "data.object.id": generated with the envelope added`,
    ]);
  });

  it('refuses a $ref to a URL without fetching it, in one line: the command reads no network', async () => {
    let requests = 0;
    const server = createServer((_request, response) => {
      requests += 1;
      response.end('{ type: object }');
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/object.yaml`;
      const file = await contract(webhook('call.missed', ['post', 'application/json', `{ type: object, properties: { type: { const: call.missed }, data: { $ref: '${url}' } } }`]));
      await expect(readContract(file)).rejects.toThrow(new ContractError(`the $ref ${url} is a URL: the command reads no network; download it and refer to the file`));
      expect(requests).toBe(0);
    } finally {
      server.close();
    }
  });

  it('warns of each pattern without maxLength that may cost more than its input, naming where it is, and of no other', async () => {
    const fields = [
      "hostile: { type: string, pattern: '^(\\S+\\s?)+$' }",
      "bounded: { type: string, pattern: '^(\\S+\\s?)+$', maxLength: 160 }",
      "phone: { type: string, pattern: '^\\+[1-9][0-9]{1,14}$' }",
      "word: { type: string, pattern: '^[a-z+*]+$' }",
    ];
    const schema = `{ type: object, properties: { type: { const: call.missed }, data: { type: object, properties: { ${fields.join(', ')} } } } }`;
    const { warnings } = await readContract(await contract(webhook('call.missed', ['post', 'application/json', schema])));
    expect(warnings.filter((warning) => warning.includes('pattern'))).toEqual([
      '#/webhooks/call.missed/post/requestBody/content/application~1json/schema/properties/data/properties/hostile: a pattern without maxLength: ' +
        'the validators refuse a string past 4,096 characters before they run it; give the field a maxLength (and the pattern no nested quantifier: one may take seconds on 30 characters)',
    ]);
  });

  describe('a $ref to a file, which is outside input too', () => {
    /** A contract whose payload's `data` is the $ref `ref`, and its folder. */
    const referring = async (ref: string, where = 'data') => {
      const schema = `{ type: object, properties: { type: { const: call.missed }, ${where}: { $ref: '${ref}' } } }`;
      const file = await contract(webhook('call.missed', ['post', 'application/json', schema]));
      return { file, folder: dirname(file) };
    };
    const SECRET_TEXT = 'WEBHOOK_SECRET=whsec_c2VjcmV0LW5ldmVyLWNvcGllZA==';

    it('reads a sibling file and one in a subfolder', async () => {
      const { file, folder } = await referring('./parts/data.yaml');
      await mkdir(join(folder, 'parts'));
      await writeFile(join(folder, 'parts/data.yaml'), "type: object\nproperties:\n  object: { $ref: '../object.yaml' }\n");
      await writeFile(join(folder, 'object.yaml'), 'type: object\nproperties:\n  id: { type: string }\n');
      const { events, document } = await readContract(file);
      expect(events.map(({ type }) => type)).toEqual(['call.missed']);
      expect(JSON.stringify(document)).toContain('"id":{"type":"string"}');
    });

    it.each([
      ['a file beside the folder, as ../.env', '../.env', 'the $ref to ../.env'],
      ['an absolute path, as /etc/passwd', '/etc/passwd', 'the $ref to /etc/passwd'],
      ['a file of /proc, which says its size is 0', '/proc/self/environ', 'the $ref to /proc/self/environ'],
    ])('refuses %s in one line, never reading it', async (_name, ref, says) => {
      const { file, folder } = await referring(ref, 'description');
      await writeFile(join(folder, '../.env'), SECRET_TEXT);
      const refusal = await readContract(file).then(() => undefined, (error: unknown) => error);
      expect(refusal).toBeInstanceOf(ContractError);
      expect((refusal as Error).message).toBe(`${says} leaves the contract's folder: only the files in it and its subfolders are read`);
    });

    it('refuses a link in the folder to a file outside it, once the link is resolved', async () => {
      const { file, folder } = await referring('./shared.yaml');
      await writeFile(join(folder, '../.env'), SECRET_TEXT);
      await symlink(join(folder, '../.env'), join(folder, 'shared.yaml'));
      await expect(readContract(file)).rejects.toThrow(new ContractError("the $ref to shared.yaml leaves the contract's folder: only the files in it and its subfolders are read"));
    });

    it('refuses what is no regular file in the folder, such as a named pipe, without opening it', async () => {
      const { file, folder } = await referring('./pipe.yaml');
      execFileSync('mkfifo', [join(folder, 'pipe.yaml')]);
      try {
        await expect(readContract(file)).rejects.toThrow(new ContractError('pipe.yaml is not a file'));
      } finally {
        // Left behind, a pipe would stop whatever copies the folder next (a mutation run's sandbox) at its open.
        await rm(join(folder, 'pipe.yaml'));
      }
    });

    it('bounds a file it reads by its bytes as they come, not by the size it reports', async () => {
      const { file, folder } = await referring('./big.yaml');
      // A sparse file reports its size truly; the bound holds for one that reports 0 as well, since the read counts.
      await writeFile(join(folder, 'big.yaml'), '');
      await truncate(join(folder, 'big.yaml'), MAX_CONTRACT_BYTES + 1);
      await expect(readContract(file)).rejects.toThrow(new ContractError('big.yaml is larger than 10 MiB: that is no contract'));
    });
  });

  it('refuses, before parsing it, a file larger than 10 MiB', async () => {
    const file = await contract(webhook('call.missed', ['post', 'application/json', envelope('{ const: call.missed }')]));
    await truncate(file, MAX_CONTRACT_BYTES + 1);
    await expect(readContract(file)).rejects.toThrow(new ContractError('openapi.yaml is larger than 10 MiB: that is no contract'));
  });

  it('refuses what is no file, such as a device that never ends', async () => {
    await expect(readContract('/dev/zero')).rejects.toThrow(new ContractError('zero is not a file'));
  });

  it('refuses YAML aliases that expand past the bound, at once (a file of under 1 KiB, 10 million values)', async () => {
    const levels = Array.from({ length: 7 }, (_, n) => `  a${n}: &a${n} [${Array.from({ length: 10 }, () => (n === 0 ? 'lol' : `*a${n - 1}`)).join(', ')}]`);
    const file = await contract(webhook('call.missed', ['post', 'application/json', `{ type: object, x-bomb: *a6, properties: { type: { const: call.missed } } }`]), '');
    await writeFile(file, (await readFile(file, 'utf8')).replace('webhooks:', `x-bomb:\n${levels.join('\n')}\nwebhooks:`));
    const started = performance.now();
    await expect(readContract(file)).rejects.toThrow(new ContractError('openapi.yaml expands to more than 6,000,000 values through its YAML aliases: that is no contract'));
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
