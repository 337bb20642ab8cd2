/**
 * The module `svc-webhooks types` writes, compiled as a user's project
 * compiles it (strict, exactOptionalPropertyTypes): the contract's fields
 * read, misspelled ones do not compile, an added type is a known type.
 * Every `@ts-expect-error` below is itself checked: one that expects an
 * error that does not come fails the compile.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commentSafe, header } from '../../../src/cli/types/type-module.js';
import { compileConsumer, runTypes } from '../../helpers/contract-types.js';

const RICH_CONSUMER = `
import './webhook-types.js';
import { dispatch, type CallMissedEvent, type KnownEventType, type WebhookDelivery } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/fetch';
import { testEvent } from 'svc-webhooks/testing';

declare const delivery: WebhookDelivery;
const secret = 'whsec_c2VjcmV0';

export const receiver = verifyWebhook({
  secret,
  on: {
    'call.missed': (event) => {
      const direction: 'inbound' | 'outbound' = event.data.object.direction;
      const caller: string = event.data.object.from.number;
      const name: string | null | undefined = event.data.object.from.name;
      // @ts-expect-error the contract names no "directon"
      void event.data.object.directon;
      // @ts-expect-error a Call has no durationMs: that is a Voicemail's
      void event.data.object.durationMs;
      return [direction, caller, name];
    },
    'message.received': (event) => {
      const { content } = event.data.object;
      // The discriminator narrows.
      const shown: string = content.kind === 'text' ? content.text : content.urls.join(' ');
      const caption: string | null | undefined = content.kind === 'media' ? content.caption : undefined;
      const labels: string | undefined = event.data.object.labels?.['campaign'];
      return [shown, caption, labels];
    },
    'voicemail.received': async (event, context) => {
      const durationMs: number = event.data.object.durationMs;
      const transcript: string | null | undefined = event.data.object.transcript;
      const type: 'voicemail.received' = event.type;
      const id: string = context.id;
      // @ts-expect-error the event is read-only
      event.data.object.durationMs = 0;
      return [durationMs, transcript, type, id];
    },
  },
});

// A type the contract leaves out keeps the spec's envelope.
void dispatch(delivery, { on: { 'transcript.ready': (event) => event.data.object.id } });
// @ts-expect-error a misspelled added type is no known type
void dispatch(delivery, { on: { 'voicemail.recieved': () => {} } });
// @ts-expect-error a handler of another type's event
void dispatch(delivery, { on: { 'voicemail.received': (event: CallMissedEvent) => event } });

export const known: KnownEventType[] = ['call.missed', 'voicemail.received', 'ai_summary.ready'];
export const fixture = testEvent('voicemail.received', { data: { object: { durationMs: 1200 } } });
export const readBack: number = fixture.data.object.durationMs;
// @ts-expect-error an override of a field the contract does not name
testEvent('voicemail.received', { data: { object: { durationSeconds: 1 } } });
`;

describe('svc-webhooks types: the module it writes', () => {
  it('gives handlers, dispatch and testEvent the full payload of each type of a rich contract, and nothing else', async () => {
    const run = await runTypes('rich.yaml');
    expect(run.code).toBe(0);
    expect(await compileConsumer(run.dir, RICH_CONSUMER)).toEqual([]);
  }, 60_000);

  it('types the validators of --schemas: schemasFor(on) is what schemas takes beside on, each typed by its event', async () => {
    const run = await runTypes('rich.yaml', ['--schemas']);
    expect(run.code).toBe(0);
    const errors = await compileConsumer(
      run.dir,
      `import type { EventHandlers, KnownEventMap, StandardSchema } from 'svc-webhooks';
import { verifyWebhook } from 'svc-webhooks/express';
import { schemas, schemasFor, type ContractEventType } from './webhook-types.schemas.js';

const on = {
  'voicemail.received': (event) => event.data.object.durationMs,
  'transcript.ready': (event) => event.data.object.id,
} satisfies EventHandlers;
export const receiver = verifyWebhook({ secret: 'whsec_c2VjcmV0', on, schemas: schemasFor(on) });
export const one: StandardSchema<unknown, KnownEventMap['voicemail.received']> = schemas['voicemail.received'];
export const types: ContractEventType[] = ['call.missed', 'message.received', 'webhook.test', 'voicemail.received'];
// @ts-expect-error the contract leaves transcript.ready out: it has no validator
void schemas['transcript.ready'];
// @ts-expect-error a schema of one type is not another type's
export const other: StandardSchema<unknown, KnownEventMap['call.missed']> = schemas['voicemail.received'];
`,
    );
    expect(errors).toEqual([]);
  }, 60_000);

  it('fails to compile a consumer that reads a field the contract does not define', async () => {
    const run = await runTypes('rich.yaml');
    const errors = await compileConsumer(run.dir, `import './webhook-types.js';\nimport { testEvent } from 'svc-webhooks/testing';\nexport const x = testEvent('call.missed').data.object.ringSeconds;\n`);
    expect(errors).toEqual([expect.stringMatching(/^consumer\.ts:3: Property 'ringSeconds' does not exist/)]);
  }, 60_000);

  it('compiles without exactOptionalPropertyTypes too, and with the spec-only contract', async () => {
    const rich = await runTypes('rich.yaml');
    expect(await compileConsumer(rich.dir, RICH_CONSUMER, { exactOptionalPropertyTypes: false })).toEqual([]);
    const spec = await runTypes('spec-envelope.yaml');
    expect(spec.code).toBe(0);
    const errors = await compileConsumer(
      spec.dir,
      `import './webhook-types.js';
import type { KnownEventType } from 'svc-webhooks';
import { testEvent } from 'svc-webhooks/testing';
export const types: KnownEventType[] = ['call.missed', 'message.received', 'webhook.test', 'transcript.ready', 'ai_summary.ready'];
export const id: string = testEvent('ai_summary.ready').data.object.id;
// @ts-expect-error the spec's contract shows no other field of the object
export const from = testEvent('call.missed').data.object.from;
// @ts-expect-error nor any type beyond its five
export const other: KnownEventType = 'voicemail.received';
`,
    );
    expect(errors).toEqual([]);
  }, 60_000);

  it("gives every event the envelope, read-only, where the contract's payload names none of it, to a project that imports only an entry", async () => {
    const run = await runTypes('bare-payload.yaml');
    expect(run.code).toBe(0);
    const errors = await compileConsumer(
      run.dir,
      `import './webhook-types.js';
import { verifyWebhook } from 'svc-webhooks/fetch';

export const receiver = verifyWebhook({
  secret: 'whsec_c2VjcmV0',
  on: {
    'note.added': (event) => {
      const fields: [string, 'note.added', string, string] = [event.id, event.type, event.data.object.id, event.note];
      // @ts-expect-error the envelope is read-only
      event.id = 'evt_1';
      // @ts-expect-error its type too
      event.type = 'note.added';
      // @ts-expect-error and its data
      event.data = { object: { id: 'obj_1' } };
      // @ts-expect-error down to the object's id
      event.data.object.id = 'obj_1';
      return fields;
    },
  },
});
`,
    );
    expect(errors).toEqual([]);
  }, 60_000);

  it("writes after openapi-typescript's types the envelope and each type's entry, and nothing else", async () => {
    const run = await runTypes('bare-payload.yaml');
    const text = await readFile(join(run.dir, 'webhook-types.ts'), 'utf8');
    expect(text.slice(text.indexOf('\n\n/** The envelope'))).toBe(`

/** The envelope every event carries (spec section 2), whatever the contract says of it. */
type Envelope<T extends string> = {
  readonly id: string;
  readonly type: T;
  readonly data: { readonly object: { readonly id: string } };
};

declare module "svc-webhooks" {
  interface ContractEventMap {
    /** #/webhooks/note.added/post/requestBody/content/application~1json/schema */
    "note.added": Envelope<"note.added"> & NonNullable<webhooks["note.added"]["post"]['requestBody']>['content']["application/json"];
  }
}
`,
    );
    // openapi-typescript's types end with their last line, one blank line before the envelope.
    expect(text).toMatch(/\S\n\n\/\*\* The envelope/);
  }, 60_000);

  it("keeps the contract's named schemas as the payloads' types", async () => {
    const run = await runTypes('rich.yaml');
    const text = await readFile(join(run.dir, 'webhook-types.ts'), 'utf8');
    // Referred to, not inlined, so that a project can name them (components['schemas']['Call']).
    expect(text).toMatch(/"application\/json": components\["schemas"\]\["VoicemailReceivedEvent"\];/);
  }, 60_000);

  it('augments svc-webhooks with each type under its envelope, types only', async () => {
    const run = await runTypes('rich.yaml');
    const text = await readFile(join(run.dir, 'webhook-types.ts'), 'utf8');
    expect(text).toMatch(/^\/\*\*\n \* Event types and payloads of the service's contract, written by `svc-webhooks types` from\n \* rich\.yaml\. Do not edit/);
    // The webhook "callMissed" carries the type its payload fixes.
    expect(text).toContain(`"call.missed": Envelope<"call.missed"> & NonNullable<webhooks["callMissed"]["post"]['requestBody']>['content']["application/json"];`);
    expect(text).toContain(`declare module "svc-webhooks" {\n  interface ContractEventMap {`);
    // Brings svc-webhooks into a program that imports only an entry, such as svc-webhooks/fetch, so that there is a module to augment.
    expect(text).toContain('\nimport type {} from "svc-webhooks";\n');
    // Nothing in it runs: only types and interfaces are declared.
    expect(text).not.toMatch(/^\s*(?:export\s+)?(?:const|let|var|function|class|enum)\b/m);
  }, 60_000);
});

describe('the comments of the modules svc-webhooks types writes', () => {
  it('name the contract, and hold no text from it that could end or break them', () => {
    expect(commentSafe('a*/b\r\nc\nd */')).toBe('a*\\/b  c d *\\/');
    expect(header('evil*/.yaml\n', 'Validators')).toBe(
      [
        '/**',
        " * Validators of the service's contract, written by `svc-webhooks types` from",
        ' * evil*\\/.yaml . Do not edit: run the command again when the contract changes,',
        ' * and `svc-webhooks types --check` in CI.',
        ' */',
      ].join('\n'),
    );
  });

  it('name each event by where its payload is, safely, in the module and the validators', async () => {
    const run = await runTypes('rich.yaml', ['--schemas']);
    for (const file of ['webhook-types.ts', 'webhook-types.schemas.ts']) {
      const text = await readFile(join(run.dir, file), 'utf8');
      expect(text).toContain('/** #/webhooks/callMissed/post/requestBody/content/application~1json/schema */\n');
    }
  }, 60_000);
});

describe('the module of a contract that refers and composes', () => {
  it('types the webhooks behind a $ref path item or request body, and the event type an allOf part fixes', async () => {
    const run = await runTypes('referred.yaml', ['--schemas']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('2 event type(s): call.missed, message.received\n');
    const errors = await compileConsumer(
      run.dir,
      `
import './webhook-types.js';
import './webhook-types.schemas.js';
import type { KnownEventMap } from 'svc-webhooks';
import type { ContractEventType } from './webhook-types.schemas.js';

declare const missed: KnownEventMap['call.missed'];
declare const received: KnownEventMap['message.received'];
export const read: [string, 'call.missed', string, string] = [missed.data.object.from, missed.type, received.data.object.text, received.data.object.id];
export const types: ContractEventType[] = ['call.missed', 'message.received'];
// @ts-expect-error the webhook's name is no event type
export const named: KnownEventMap['callMissed'] = missed;
`,
    );
    expect(errors).toEqual([]);
  }, 60_000);
});
