import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

it('upserts and finds a contact', async () => {
  const { publicKey } = await t.newOrg();
  const r = await call(t, 'POST', '/contacts/upsert', {
    key: publicKey,
    body: { email: ' Ada@Example.com ', firstName: 'Ada', tags: ['a'] },
  });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ created: true, matchedBy: null });
  const r2 = await call(t, 'POST', '/contacts/upsert', { key: publicKey, body: { email: 'ada@example.com', phone: '123', tags: ['b'] } });
  expect(r2.body).toMatchObject({ id: r.body.id, created: false, matchedBy: 'email' });
  const s = await call(t, 'GET', '/contacts/search?email=ADA@example.com', { key: publicKey });
  expect(s.status).toBe(200);
  expect(s.body).toMatchObject({
    id: r.body.id,
    email: 'ada@example.com',
    firstName: 'Ada',
    phone: '123',
    tags: ['a', 'b'],
    leadScore: 25,
  });
  const n = await call(t, 'POST', `/contacts/${r.body.id}/notes`, { key: publicKey, body: { body: 'hello' } });
  expect(n.status).toBe(201);
  const c = await call(t, 'POST', '/companies/upsert', { key: publicKey, body: { domain: 'https://www.Acme.com/x', name: 'Acme' } });
  expect(c.body).toMatchObject({ created: true, domain: 'acme.com' });
  const l = await call(t, 'POST', '/leads', { key: publicKey, body: { email: 'bob@acme.com', companyDomain: 'acme.com', score: 80 } });
  expect(l.body).toMatchObject({ created: true, warning: null });
  const b = await call(t, 'POST', '/contacts/batch-upsert', {
    key: publicKey,
    body: { contacts: [{ email: 'x@y.com' }, { email: 'bad' }, { firstName: 'A' }] },
  });
  expect(b.status).toBe(200);
  expect(b.body.created).toBe(1);
  expect(b.body.failed).toBe(2);
});
