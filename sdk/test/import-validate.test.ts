/**
 * `leadwire import --dry-run` checks rows by the /v1 document's ContactUpsertInput (compiled by ajv into
 * sdk/src/generated/contact-row.ts) and the rules the document states in words (sdk/src/cli/import/validate.ts): this
 * holds the dry run equal to the server by sending a corpus of good and bad rows to a real server's batch upsert and
 * comparing, row by row, the outcome, the error code and the fields named; the message names each field with its
 * reason (the server's own words where the rule is written in validate.ts, the schema's where ajv found it).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { validateContactRow } from '../src/cli/import/validate.ts';

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await initTestApp();
  key = (await t.newOrg({ plan: 'max' })).publicKey;
  const res = await post('/companies/upsert', { domain: 'example.com', name: 'Example' });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await t?.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${t.v1}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const long = (n: number) => 'x'.repeat(n);
let n = 0;
const mail = () => `row${++n}@example.com`;

/** Rows a CSV or JSONL import can produce, good and bad, one rule at a time and a few at once. */
const CORPUS: Record<string, unknown>[] = [
  { email: mail() },
  { email: `  ${mail().toUpperCase()}  `, firstName: 'Ada', lastName: 'Lovelace', title: 'CTO', phone: '+44 20 7946 0000' },
  { email: mail(), tags: ['vip', 'speaker'], custom: { plan: 'pro', nested: { a: [1, 'b'] } }, source: 'trade-show' },
  { firstName: 'Grace', lastName: 'Hopper', companyDomain: 'https://www.Example.com/about' },
  { firstName: 'Grace', lastName: 'Hopper', companyDomain: 'not a domain' },
  { firstName: 'Grace', lastName: 'Hopper', companyDomain: 'localhost' },
  { email: mail(), companyDomain: '192.168.0.1' },
  { firstName: 'Only', lastName: 'Names' },
  { firstName: 'Grace', companyDomain: 'example.com' },
  { firstName: '   ', lastName: 'Blank', companyDomain: 'example.com' },
  { phone: '+1 555 0100' },
  { tags: ['orphan'] },
  { email: 'not-an-email' },
  { email: 'two@@example.com' },
  { email: 'dot.@example.com' },
  { email: 'a@b.c' },
  { email: "o'neil+news@example.co.uk" },
  { email: '' },
  { email: null, firstName: 'Null', lastName: 'Mail', companyDomain: 'example.com' },
  { email: 42 },
  { email: `${long(250)}@example.com` },
  { email: `${long(330)}@example.com` },
  { email: mail(), firstName: long(201) },
  { email: mail(), lastName: 'Nul\u0000Byte' },
  { email: mail(), phone: long(51) },
  { email: mail(), title: 'Lone \ud800 surrogate' },
  { email: mail(), companyDomain: long(2049) },
  { email: mail(), source: 'has space' },
  { email: mail(), source: long(41) },
  { email: mail(), source: null },
  { email: mail(), tags: 'not-an-array' },
  { email: mail(), tags: ['ok', ''] },
  { email: mail(), tags: [long(101)] },
  { email: mail(), tags: Array.from({ length: 101 }, (_, i) => `t${i}`) },
  { email: mail(), custom: 'plain' },
  { email: mail(), custom: { '': 1 } },
  { email: `bad..dots${long(330)}@example.com` },
  { email: mail(), custom: ['a'] },
  { email: mail(), custom: { ok: long(10_001) } },
  { email: mail(), custom: { [long(101)]: 1 } },
  { email: mail(), custom: JSON.parse('{"__proto__":{"x":1}}') as Record<string, unknown> },
  { email: mail(), custom: { a: { b: { c: { d: { e: { f: { g: { h: 1 } } } } } } } } },
  { email: mail(), custom: { bad: 'nul\u0000' } },
  { email: mail(), custom: Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, i])) },
  { email: 'not-an-email', firstName: long(201), source: '!' },
  { firstName: 42, lastName: 'Typed', companyDomain: 'example.com' },
  // 101 emoji are 202 UTF-16 code units but 101 characters: within the limit as zod (and ajv) count.
  { email: mail(), firstName: '\u{1F600}'.repeat(101) },
  { email: mail(), firstName: '\u{1F600}'.repeat(201) },
  { email: mail(), firstName: `  ${long(200)}  ` },
  { email: mail(), tags: ['  '] },
];

it('the dry run judges every row of the corpus as the server does: outcome, code, fields and message', async () => {
  const res = await post('/contacts/batch-upsert', { contacts: CORPUS });
  expect(res.status).toBe(200);
  const { results } = (await res.json()) as {
    results: { ok: boolean; error?: { code: string; error: string; issues?: { path: string }[] } }[];
  };
  const server = results.map((r) =>
    r.ok ? null : { code: r.error!.code, message: r.error!.error, paths: [...new Set((r.error!.issues ?? []).map((i) => i.path))] },
  );
  const local = CORPUS.map((row) => validateContactRow(row));
  CORPUS.forEach((row, i) => {
    const what = `row ${i}: ${JSON.stringify(row).slice(0, 200)}; server: ${JSON.stringify(server[i])}`;
    expect(local[i] && { code: local[i].code, paths: local[i].paths }, what).toEqual(
      server[i] && { code: server[i].code, paths: server[i].paths },
    );
    if (!local[i] || !server[i]) return;
    // Either the server's very words, or each field named with a reason.
    if (local[i].message === server[i].message) return;
    expect(local[i].message, what).toMatch(/^Validation failed: /);
    for (const path of local[i].paths) expect(local[i].message, what).toMatch(new RegExp(`(^|; |: )${path.replace(/[.]/g, '\\.')}: \\S`));
  });
  // The corpus exercises both outcomes and both codes.
  expect(server.filter((s) => s === null).length).toBeGreaterThan(3);
  expect(new Set(server.map((s) => s?.code))).toEqual(new Set([undefined, 'validation_failed', 'missing_identity']));
});

it('says what is wrong with a field in words a person can act on', () => {
  const message = (row: Record<string, unknown>) => validateContactRow(row)?.message;
  expect(message({ email: 42 })).toBe('Validation failed: email: expected string or null, received number');
  expect(message({ email: 'a@example.com', firstName: long(201) })).toBe('Validation failed: firstName: must be at most 200 characters');
  expect(message({ email: 'a@example.com', tags: ['ok', ''] })).toBe('Validation failed: tags.1: must not be empty');
  expect(message({ email: 'a@example.com', tags: 'vip' })).toBe('Validation failed: tags: expected array, received string');
  expect(message({ email: 'a@example.com', custom: ['a'] })).toBe('Validation failed: custom: expected an object, received array');
  expect(message({ email: 'a@example.com', custom: { [long(101)]: 1 } })).toBe(
    `Validation failed: custom.${long(101)}: key must be at most 100 characters`,
  );
  expect(message({ email: 'a@example.com', source: 'has space' })).toBe(
    'Validation failed: source: must match ^[A-Za-z0-9._-]{1,40}$ (got "has space")',
  );
  expect(message({ email: 'not-an-email', firstName: long(201) })).toBe(
    'Validation failed: email: email must be a valid email address; firstName: must be at most 200 characters',
  );
});
