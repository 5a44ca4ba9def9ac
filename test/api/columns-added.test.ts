/**
 * A rolling deploy migrates the database under processes that are still running. Their pooled connections hold
 * prepared statements; one that expanded `*` would fail with "cached plan must not change result type" on every such
 * connection once a column is added. Every statement names its columns, so the contact routes keep answering.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
// Few connections, and bursts wider than the pool, so every connection prepares the routes' statements.
const POOL = 2;
const BURST = 4;

beforeAll(async () => {
  t = await initTestApp({ DB_POOL_MAX: String(POOL) });
  // The largest plan's Internal key allowance (300 a minute) covers the three passes below.
  org = await t.newOrg({ plan: 'max' });
});
afterAll(async () => t?.close());

interface Answer {
  status: number;
  body: any;
}

async function app(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${t.origin}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${org.internalKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}
const v1 = (method: string, path: string, body?: unknown) =>
  call(t, method, path, { key: org.publicKey, ...(body === undefined ? {} : { body }) });

/** Every contact route (and the deal routes, whose table also changes), BURST calls at once each; the refused ones. */
async function everyRoute(): Promise<string[]> {
  const failures: string[] = [];
  const burst = async (route: string, run: (i: number) => Promise<Answer>): Promise<any[]> =>
    Promise.all(
      Array.from({ length: BURST }, async (_, i) => {
        const r = await run(i);
        if (r.status >= 300) failures.push(`${route}: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body;
      }),
    );
  const tag = randomUUID().slice(0, 8);
  const email = (i: number, kind: string) => `${kind}-${tag}-${i}@example.com`;

  // The public API.
  await burst('POST /v1/contacts/upsert', (i) => v1('POST', '/contacts/upsert', { email: email(i, 'v1'), firstName: 'Ada' }));
  await burst('POST /v1/contacts/upsert (existing)', (i) => v1('POST', '/contacts/upsert', { email: email(i, 'v1'), tags: ['again'] }));
  await burst('POST /v1/contacts/batch-upsert', (i) =>
    v1('POST', '/contacts/batch-upsert', { contacts: [{ email: email(i, 'v1') }, { email: email(i, 'batch') }] }),
  );
  await burst('GET /v1/contacts/search', (i) => v1('GET', `/contacts/search?email=${encodeURIComponent(email(i, 'v1'))}`));
  await burst('POST /v1/leads', (i) => v1('POST', '/leads', { email: email(i, 'lead') }));

  // The application.
  const created = await burst('POST /contacts', (i) => app('POST', '/contacts', { email: email(i, 'app'), firstName: 'Grace' }));
  const ids = created.map((c: { id?: string }) => c.id).filter((id): id is string => typeof id === 'string');
  if (ids.length < BURST) return failures;
  await burst('GET /contacts', () => app('GET', '/contacts?q=Grace'));
  await burst('GET /contacts/{id}', (i) => app('GET', `/contacts/${ids[i]}`));
  await burst('POST /contacts/{id}/update', (i) => app('POST', `/contacts/${ids[i]}/update`, { lastName: `Hopper ${i}` }));
  await burst('POST /contacts/{id}/tags/add', (i) => app('POST', `/contacts/${ids[i]}/tags/add`, { tags: ['vip'] }));
  await burst('POST /contacts/{id}/tags/remove', (i) => app('POST', `/contacts/${ids[i]}/tags/remove`, { tags: ['vip'] }));
  await burst('POST /contacts/{id}/stage', (i) => app('POST', `/contacts/${ids[i]}/stage`, { stage: 'customer' }));
  await burst('POST /contacts/{id}/score', (i) => app('POST', `/contacts/${ids[i]}/score`, { score: 50 + i }));
  const deals = await burst('POST /deals', (i) => app('POST', '/deals', { contactId: ids[i], title: `Deal ${i}` }));
  await burst('GET /deals/{id}', (i) => app('GET', `/deals/${deals[i]?.id}`));
  await burst('GET /deals', () => app('GET', '/deals'));
  await burst('GET /contacts/{id}/timeline', (i) => app('GET', `/contacts/${ids[i]}/timeline`));
  await burst('POST /contacts/{id}/delete', (i) => app('POST', `/contacts/${ids[i]}/delete`));
  await burst('GET /trash/contacts', () => app('GET', '/trash/contacts'));
  await burst('POST /contacts/{id}/restore', (i) => app('POST', `/contacts/${ids[i]}/restore`));
  const pairs = await burst('POST /contacts (to merge)', (i) => app('POST', '/contacts', { firstName: `Dup ${tag} ${i}` }));
  await burst('POST /contacts/merge', (i) => app('POST', '/contacts/merge', { primaryId: ids[i], secondaryIds: [pairs[i]?.id] }));
  return failures;
}

describe('a migration under a running server', () => {
  it('adds columns to contacts and deals while every pooled connection holds prepared statements; every route still answers', async () => {
    expect(await everyRoute()).toEqual([]);
    await t.sql(`alter table contacts add column nickname text null, add column vip boolean not null default false`);
    await t.sql(`alter table deals add column probability int null`);
    try {
      // Twice: a connection the first pass did not reach would fail on the second.
      expect(await everyRoute()).toEqual([]);
      expect(await everyRoute()).toEqual([]);
    } finally {
      await t.sql('alter table contacts drop column nickname, drop column vip');
      await t.sql('alter table deals drop column probability');
    }
  });
});
