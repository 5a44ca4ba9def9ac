/**
 * Cursors and parameter names, on every operation of both documents that takes them. Every paged operation gets real
 * cursors of its own (to prove they work), every other list's, and its own mutated: re-encoded, truncated, and with
 * each value pushed out of range. All but its own must be refused with 400 (`invalid_cursor`, or `validation_failed`
 * where the parameter's schema already refuses the shape), and every answer is held to the document as the main fuzz
 * test holds it (./check.ts). Every read route is also sent a misspelt parameter, which must be refused, not ignored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { PUBLIC_V4, testDns } from '../webhooks/endpoints/support.ts';
import { check, responseOf, responseValidators } from './check.ts';
import { Generator, rng, type Schema } from './generate.ts';

/** /v1 routes that came before the read routes and keep ignoring unknown parameters (the document says so). */
const LENIENT = new Set(['/api/v1 GET /contacts/search']);
/** Operations that would end the session the test reads with. */
const SKIP = new Set(['accounts-signOut', 'accounts-logOutAll']);

let t: TestApp;
let publicKey: string;
let internalKey: string;
/** A session for the internal surface: an Internal key's per-minute limit would refuse a few hundred reads. */
let session: string;
const ids: Record<string, string> = {};
beforeAll(async () => {
  t = await initTestApp({}, { resolver: testDns({ 'hooks.example.com': [PUBLIC_V4] }).resolver });
  const org = await t.newOrg({ plan: 'max' });
  ({ publicKey, internalKey } = org);
  const [owner] = await t.sql<{ email: string }>('select email from users where id = ?', [org.userId]);
  const signIn = await fetch(`${t.origin}/api/accounts/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: owner!.email, password: 'correct horse battery staple' }),
  });
  session = ((await signIn.json()) as { token: string }).token;
  const v1 = (method: string, path: string, body?: unknown) => call(t, method, path, { key: publicKey, body });
  const app = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${t.origin}/api${path}`, {
      method,
      headers: { authorization: `Bearer ${internalKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = res.status === 204 ? {} : ((await res.json()) as Record<string, any>);
    if (res.status >= 300) throw new Error(`seeding ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  // Two of everything whose cursor encodes a position (one page of one has a next page), one of every id-keyed list.
  const contacts = [];
  for (const n of [1, 2, 3, 4]) contacts.push((await v1('POST', '/contacts/upsert', { email: `cursor-${n}@example.com` })).body.id);
  ids.contact = contacts[0];
  for (const n of [1, 2]) await v1('POST', '/companies/upsert', { domain: `cursor-${n}.example` });
  for (const body of ['first', 'second']) await v1('POST', `/contacts/${ids.contact}/notes`, { body });
  for (const id of contacts.slice(2)) await app('POST', `/contacts/${id}/delete`);
  const contactId = ids.contact;
  await app('POST', '/deals', { contactId, title: 'Deal' });
  await app('POST', '/tasks', { contactId, title: 'Task' });
  await app('POST', '/bookings', { contactId, startsAt: '2026-12-01T09:00:00Z', endsAt: '2026-12-01T09:30:00Z' });
  await app('POST', '/ai-actions', { contactId, kind: 'send_sms', summary: 'Follow up' });
  ids.form = (
    await app('POST', '/forms', { name: 'Cursor form', fields: [{ id: 'email', label: 'Email', type: 'email', required: true }] })
  ).id;
  ids.workflow = (await app('POST', '/workflows', { name: 'Cursor flow', steps: [{ action: 'add_tag', input: { tags: ['x'] } }] })).id;
  ids.endpoint = (await app('POST', '/webhooks', { url: 'https://hooks.example.com/leadwire', events: ['contact.created'] })).id;
});
afterAll(async () => t?.close());

interface Op {
  surface: string;
  doc: Schema;
  method: string;
  path: string;
  op: Schema;
  /** The query parameter that carries the cursor, when the operation pages. */
  cursorParam?: Schema;
}

async function operations(): Promise<Op[]> {
  const out: Op[] = [];
  for (const surface of ['/api/v1', '/api']) {
    const doc = (await (await fetch(`${t.origin}${surface}/docs/json`)).json()) as Schema;
    for (const [path, item] of Object.entries<Schema>(doc.paths)) {
      for (const [method, op] of Object.entries<Schema>(item)) {
        if (SKIP.has(op.operationId)) continue;
        const query = (op.parameters ?? []).filter((p: Schema) => p.in === 'query');
        // A cursor is what the page hands back as nextCursor; `after` of the company dropdown is a domain, not one.
        const pages = Boolean(responseOf(doc, op, 200)?.content?.['application/json']?.schema?.properties?.nextCursor);
        const cursorParam = pages ? query.find((p: Schema) => p.name === 'cursor' || p.name === 'after') : undefined;
        out.push({ surface, doc, method: method.toUpperCase(), path, op, ...(cursorParam ? { cursorParam } : {}) });
      }
    }
  }
  return out;
}

/** The path with its parameters: the seeded record the route is about where there is one, else a made-up id. */
function pathOf(o: Op): string {
  const parent = /^\/(contacts|forms|workflows|webhooks)\//.exec(o.path)?.[1];
  const id = { contacts: ids.contact, forms: ids.form, workflows: ids.workflow, webhooks: ids.endpoint }[parent ?? ''];
  return o.path.replace(/\{[^}]+\}/g, id ?? '7d1e0c54-2b9f-4d7a-8c3e-1f2a3b4c5d6e');
}

async function send(o: Op, query: string) {
  const auth = o.surface === '/api/v1' ? publicKey : session;
  const res = await fetch(`${t.origin}${o.surface}${pathOf(o)}${query ? `?${query}` : ''}`, {
    headers: { authorization: `Bearer ${auth}` },
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const b64 = (s: string) => Buffer.from(s, 'base64url').toString('utf8');
const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Each value of a decoded cursor pushed out of the range PostgreSQL or the cursor's own rules take. */
function outOfRange(cursor: string): string[] {
  if (UUID.test(cursor)) return ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff'];
  const text = b64(cursor);
  const out: string[] = [];
  const enc = (s: string) => Buffer.from(s).toString('base64url');
  if (/^\d+(:\d+)+$/.test(text)) {
    // The feed's `1:<txid>:<seq>`: past 2^64 and 2^63, negative.
    const [v, ...rest] = text.split(':');
    for (const big of ['18446744073709551616', '9223372036854775808', '-1']) out.push(enc([v, ...rest.map(() => big)].join(':')));
    return out;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return out;
  }
  const swap = (f: (v: unknown) => unknown) => enc(JSON.stringify(JSON.parse(JSON.stringify(parsed), (_k, v) => f(v))));
  const isTs = (v: unknown): v is string => typeof v === 'string' && TS.test(v);
  for (const ts of [
    '0000-01-01T00:00:00.000000Z',
    '2026-13-01T00:00:00.000000Z',
    '2026-02-29T00:00:00.000000Z',
    '10000-01-01T00:00:00.000000Z',
  ]) {
    out.push(swap((v) => (isTs(v) ? ts : v)));
  }
  out.push(swap((v) => (typeof v === 'string' && UUID.test(v) ? `${v.slice(0, 35)}g` : v)));
  out.push(swap((v) => (typeof v === 'number' ? 2 ** 64 : typeof v === 'string' && /^-?\d+$/.test(v) ? '99999999999999999999' : v)));
  out.push(swap((v) => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' && !TS.test(x) && !UUID.test(x) ? `${x}\u0000` : x)) : v)));
  return out.filter((c) => c !== cursor);
}

/** The same cursor spelt otherwise, and cut short. */
function respelt(cursor: string): string[] {
  if (UUID.test(cursor)) return [cursor.replaceAll('-', ''), `{${cursor}}`, cursor.slice(0, 35), cursor.slice(0, 1)];
  const raw = Buffer.from(cursor, 'base64url');
  const out = [
    `${cursor}=`,
    raw.toString('base64'),
    raw.toString('hex'),
    cursor.slice(0, -1),
    cursor.slice(0, Math.ceil(cursor.length / 2)),
    cursor.slice(0, 2),
  ];
  try {
    out.push(Buffer.from(JSON.stringify(JSON.parse(raw.toString('utf8')), null, 1)).toString('base64url'));
  } catch {
    // Not JSON (the feed's cursor): nothing to re-spell this way.
  }
  return out.filter((c) => c !== cursor);
}

/** A parameter name misspelt the way people misspell them: two letters swapped, one dropped, a plural. */
const misspell = (name: string) => (name.length > 3 ? `${name.slice(0, -2)}${name.at(-1)}${name.at(-2)}` : `${name}s`);

describe('cursors', () => {
  it('every paged operation of both surfaces takes its own cursors and refuses every other, mutated or foreign', async () => {
    const paged = (await operations()).filter((o) => o.cursorParam);
    expect(paged.length).toBeGreaterThanOrEqual(17);
    // One real cursor of each list: a next page's cursor, or (lists keyed by id) the id of a record it lists.
    const own = new Map<Op, string>();
    for (const o of paged) {
      const res = await send(o, `limit=1`);
      expect(res.status, `${o.surface} ${o.path}: ${res.text.slice(0, 200)}`).toBe(200);
      const body = JSON.parse(res.text);
      const cursor = body.nextCursor ?? (o.cursorParam!.schema?.format === 'uuid' ? body.items?.[0]?.id : undefined);
      if (cursor) own.set(o, cursor);
    }
    // Every list whose records the seed made has a cursor of its own to mutate: all but the ones nothing writes here.
    expect(own.size, [...own.keys()].map((o) => o.path).join(' ')).toBeGreaterThanOrEqual(14);
    const problems: string[] = [];
    let sent = 0;
    const validatorFor = new Map<Schema, ReturnType<typeof responseValidators>>();
    for (const [index, o] of paged.entries()) {
      const name = o.cursorParam!.name as string;
      const mine = own.get(o);
      if (mine) {
        const ok = await send(o, `limit=1&${name}=${encodeURIComponent(mine)}`);
        if (ok.status !== 200) problems.push(`own cursor refused: ${o.surface} ${o.path} ${ok.status} ${ok.text.slice(0, 200)}`);
      }
      // Every other list's encoded cursor, and a third of the id-keyed lists' ids (a different third for each list).
      const others = [...own].filter(([other, c]) => other !== o && c !== mine).map(([, c]) => c);
      const foreign = [
        ...others.filter((c) => !UUID.test(c)),
        ...others.filter((c) => UUID.test(c)).filter((_, i) => (i + index) % 3 === 0),
      ];
      const mutated = mine ? [...respelt(mine), ...outOfRange(mine)] : [];
      for (const bad of new Set([...foreign, ...mutated])) {
        const res = await send(o, `limit=1&${name}=${encodeURIComponent(bad)}`);
        sent++;
        const validators = validatorFor.get(o.doc) ?? responseValidators(o.doc);
        validatorFor.set(o.doc, validators);
        const documented = check(o.doc, res, o.op, validators);
        const code = res.status === 400 ? JSON.parse(res.text).code : undefined;
        // A value the parameter's schema takes (any string, or a UUID where it wants one) is judged as a cursor.
        const shapeOk = o.cursorParam!.schema?.format !== 'uuid' || UUID.test(bad);
        const expected =
          shapeOk && bad.length <= (o.cursorParam!.schema?.maxLength ?? Infinity)
            ? ['invalid_cursor']
            : ['invalid_cursor', 'validation_failed'];
        if (documented || !expected.includes(code)) {
          problems.push(`${documented ?? `${res.status} ${code}`}: ${o.surface} GET ${o.path} ${name}=${bad} -> ${res.text.slice(0, 160)}`);
        }
      }
    }
    expect(sent).toBeGreaterThan(250);
    expect(problems.slice(0, 15), `${problems.length} problems`).toEqual([]);
  }, 120_000);
});

describe('parameter names', () => {
  it('every read route of both surfaces refuses a misspelt parameter with 400 validation_failed naming it', async () => {
    const gen = new Generator({}, rng(28), Object.values(ids));
    const problems: string[] = [];
    const reads = (await operations()).filter((o) => o.method === 'GET');
    expect(reads.length).toBeGreaterThan(50);
    for (const o of reads) {
      const gen2 = new Generator(o.doc.components?.schemas ?? {}, rng(28), Object.values(ids));
      const query = (o.op.parameters ?? []).filter((p: Schema) => p.in === 'query');
      const required = query
        .filter((p: Schema) => p.required)
        .map((p: Schema) => `${p.name}=${encodeURIComponent(String(gen2.value(gen2.resolve(p.schema))))}`);
      const wrong = misspell(query.find((p: Schema) => !p.required)?.name ?? query[0]?.name ?? 'limit');
      const res = await send(o, [...required, `${wrong}=1`].join('&'));
      const key = `${o.surface} GET ${o.path}`;
      if (LENIENT.has(key)) {
        const without = await send(o, required.join('&'));
        if (res.status !== without.status) problems.push(`${key}: ${wrong} changed the answer (${without.status} -> ${res.status})`);
        continue;
      }
      const body = res.status === 400 ? JSON.parse(res.text) : undefined;
      const named = body?.code === 'validation_failed' && JSON.stringify(body.issues ?? body.error).includes(wrong);
      if (!named) problems.push(`${key}?${wrong}=1 -> ${res.status} ${res.text.slice(0, 160)}`);
    }
    void gen;
    expect(problems, `${problems.length} read routes took a misspelt parameter`).toEqual([]);
  }, 60_000);
});
