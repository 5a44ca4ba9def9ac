import { randomUUID } from 'node:crypto';
import { internalRouter, restRoutes } from '@leadwire/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, rest, type TestOrg, typedClient } from './contacts-support.ts';

/**
 * The application surface's query strings: a parameter a route does not take is refused (a misspelt filter would
 * otherwise answer as if there were no filter: `GET /api/contacts?email=x` listed every contact), and contacts can be
 * found by exact email.
 */

let t: TestApp;
let org: TestOrg;
beforeAll(async () => {
  t = await initTestApp();
  org = await newTestOrg(t);
});
afterAll(async () => t?.close());

describe('unknown query parameters on the application surface', () => {
  const gets = restRoutes(internalRouter).filter((r) => r.method === 'GET');

  it('are refused with 400 validation_failed naming them, on every GET route', async () => {
    expect(gets.length).toBeGreaterThan(20);
    for (const route of gets) {
      const path = route.path.replace(/\{[^}]+\}/g, randomUUID());
      const r = await rest(t, 'GET', `${path}?bogus=1&limit=5`, org.ownerKey);
      expect(r.status, `${route.path}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.issues.map((i: { path: string }) => i.path)).toContain('bogus');
      expect(r.body.error).toContain('bogus');
    }
  });

  it('say which parameters the route takes', async () => {
    const r = await rest(t, 'GET', '/contacts?emial=ada@example.com', org.ownerKey);
    expect(r.body).toMatchObject({ code: 'validation_failed', issues: [{ path: 'emial', message: 'unknown query parameter "emial"' }] });
    expect(r.body.error).toMatch(/^Validation failed: unknown query parameter emial; this route takes .*\bemail\b/);
    const none = await rest(t, 'GET', '/me?x=1', org.ownerKey);
    expect(none.body.error).toBe('Validation failed: unknown query parameter x; this route takes no query parameters');
  });

  it('leave the parameters a route does take alone, and POST routes’ query strings as they were', async () => {
    expect((await rest(t, 'GET', '/contacts?limit=5&sort=createdAt&order=asc', org.ownerKey)).status).toBe(200);
    expect((await rest(t, 'GET', '/me', org.ownerKey)).status).toBe(200);
    expect((await rest(t, 'POST', '/contacts?extra=1', org.ownerKey, { email: 'post-query@example.com' })).status).toBe(201);
  });
});

describe('GET /api/contacts?email=', () => {
  let ada: string;
  beforeAll(async () => {
    ada = (await rest(t, 'POST', '/contacts', org.ownerKey, { email: 'ada@example.com', firstName: 'Ada', stage: 'customer' })).body.id;
    await rest(t, 'POST', '/contacts', org.ownerKey, { email: 'ada.lovelace@example.com', firstName: 'Ada' });
    await rest(t, 'POST', '/contacts', org.ownerKey, { email: 'ada+news@example.com', firstName: 'Ada' });
    const other = await newTestOrg(t);
    await rest(t, 'POST', '/contacts', other.ownerKey, { email: 'ada@example.com' });
  });
  const emails = async (q: string) => {
    const r = await rest(t, 'GET', `/contacts?${q}`, org.ownerKey);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.items.map((c: { email: string }) => c.email);
  };

  it('finds exactly the contact with that email: trimmed, case-insensitive, never a substring, never another organization', async () => {
    expect(await emails('email=ada@example.com')).toEqual(['ada@example.com']);
    expect(await emails(`email=${encodeURIComponent('  ADA@Example.COM ')}`)).toEqual(['ada@example.com']);
    expect(await emails('email=ada%2Bnews@example.com')).toEqual(['ada+news@example.com']);
    expect(await emails('email=nobody@example.com')).toEqual([]);
    const [found] = (await rest(t, 'GET', '/contacts?email=ada@example.com', org.ownerKey)).body.items;
    expect(found.id).toBe(ada);
  });

  it('composes with the other filters', async () => {
    expect(await emails('email=ada@example.com&stage=customer')).toEqual(['ada@example.com']);
    expect(await emails('email=ada@example.com&stage=lead')).toEqual([]);
    expect(await emails('email=ada@example.com&q=lovelace')).toEqual([]);
  });

  it('refuses what is no email with 400, and says how to send a +', async () => {
    for (const bad of ['ada', "x' or '1'='1", '%00', 'a'.repeat(400)]) {
      const r = await rest(t, 'GET', `/contacts?email=${bad}`, org.ownerKey);
      expect(r.status, bad.slice(0, 20)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    const plus = await rest(t, 'GET', '/contacts?email=ada+news@example.com', org.ownerKey);
    expect(plus.status).toBe(400);
    expect(plus.body.issues[0]).toMatchObject({ path: 'email', message: expect.stringContaining('%2B') });
  });

  it('is on the typed client too', async () => {
    const page = await typedClient(t, org.ownerKey).contacts.list.query({ email: 'ADA@example.com' });
    expect(page.items.map((c) => c.id)).toEqual([ada]);
  });
});
