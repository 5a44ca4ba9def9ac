import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { AppError } from '@leadwire/core';
import { identifyVisitor } from '#core/tracking/service.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import { initTestApp, type TestApp } from '../support/app.ts';
import { collect, pageViews, trackingEvents } from './support.ts';

let t: TestApp;
let a: TestOrg;
let b: TestOrg;
beforeAll(async () => {
  t = await initTestApp();
  a = await newTestOrg(t);
  b = await newTestOrg(t);
});
afterAll(async () => {
  await t?.close();
});

const newVisitor = () => `v${randomUUID().replaceAll('-', '')}`;
const anonymousView = (org: string, visitor: string, path: string) =>
  collect(t, { org, url: `https://shop.example${path}`, referrer: null, title: null, visitor });

describe('identifyVisitor (called by form intake when a form is submitted from a tracked browser)', () => {
  it("attaches the visitor's earlier anonymous views to the contact, and its later ones follow", async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'form@shop.example', firstName: 'Form' });
    const visitor = newVisitor();
    const otherVisitor = newVisitor();
    await anonymousView(a.orgId, visitor, '/one');
    await anonymousView(a.orgId, visitor, '/two');
    await anonymousView(a.orgId, otherVisitor, '/else');
    // The same visitor id in another organization is another browser as far as this one is concerned.
    await anonymousView(b.orgId, visitor, '/b');

    expect(await identifyVisitor(t.runtime.deps.db, a.orgId, visitor, c.id)).toEqual({ attached: 2 });
    expect((await pageViews(t, a.orgId)).filter((v) => v.contact_id === c.id).map((v) => v.url)).toEqual([
      'https://shop.example/one',
      'https://shop.example/two',
    ]);
    expect((await pageViews(t, a.orgId)).find((v) => v.visitor_id === otherVisitor)?.contact_id).toBeNull();
    expect((await pageViews(t, b.orgId)).map((v) => v.contact_id)).toEqual([null]);
    // No events for views that already happened.
    expect((await trackingEvents(t, a.orgId)).filter((e) => e.data.contact.id === c.id)).toEqual([]);

    // Later views of that browser are the contact's, with their event.
    await anonymousView(a.orgId, visitor, '/three');
    expect((await pageViews(t, a.orgId)).filter((v) => v.contact_id === c.id)).toHaveLength(3);
    expect((await trackingEvents(t, a.orgId)).filter((e) => e.data.contact.id === c.id).map((e) => e.data.visit.url)).toEqual([
      'https://shop.example/three',
    ]);

    // Again: nothing left to attach.
    expect(await identifyVisitor(t.runtime.deps.db, a.orgId, visitor, c.id)).toEqual({ attached: 0 });
  });

  it('lets the latest identification of a browser win for later views; earlier views stay with whom they were', async () => {
    const first = await a.owner.contacts.create.mutate({ email: 'first@shop.example' });
    const second = await a.owner.contacts.create.mutate({ email: 'second@shop.example' });
    const visitor = newVisitor();
    await anonymousView(a.orgId, visitor, '/shared-1');
    await identifyVisitor(t.runtime.deps.db, a.orgId, visitor, first.id);
    await identifyVisitor(t.runtime.deps.db, a.orgId, visitor, second.id);
    await anonymousView(a.orgId, visitor, '/shared-2');
    const mine = (await pageViews(t, a.orgId)).filter((v) => v.visitor_id === visitor);
    expect(mine.map((v) => [v.url, v.contact_id])).toEqual([
      ['https://shop.example/shared-1', first.id],
      ['https://shop.example/shared-2', second.id],
    ]);
  });

  it("joins the caller's transaction: rolled back with it", async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'rollback@shop.example' });
    const visitor = newVisitor();
    await anonymousView(a.orgId, visitor, '/rb');
    await expect(
      t.runtime.deps.db.transaction(async (tx) => {
        expect(await identifyVisitor(tx, a.orgId, visitor, c.id)).toEqual({ attached: 1 });
        throw new Error('the form submission failed');
      }),
    ).rejects.toThrow('the form submission failed');
    expect((await pageViews(t, a.orgId)).find((v) => v.visitor_id === visitor)?.contact_id).toBeNull();
    expect(await t.sql('select 1 from tracking_visitors where visitor_id = ?', [visitor])).toEqual([]);
  });

  it('attaches nothing for an id that is no snippet visitor id, and refuses a contact of another organization', async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'strict@shop.example' });
    const foreign = await b.owner.contacts.create.mutate({ email: 'strict@shop.example' });
    expect(await identifyVisitor(t.runtime.deps.db, a.orgId, "x'; drop table page_views; --", c.id)).toEqual({ attached: 0 });
    expect(await identifyVisitor(t.runtime.deps.db, a.orgId, '', c.id)).toEqual({ attached: 0 });
    for (const contactId of [foreign.id, randomUUID(), 'not-a-uuid']) {
      const err = await identifyVisitor(t.runtime.deps.db, a.orgId, newVisitor(), contactId).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ status: 404, code: 'not_found' });
    }
  });

  it('moves page views and remembered browsers with a merge', async () => {
    const primary = await a.owner.contacts.create.mutate({ email: 'keep@shop.example' });
    const dup = await a.owner.contacts.create.mutate({ email: 'dup@shop.example' });
    const visitor = newVisitor();
    await anonymousView(a.orgId, visitor, '/merged');
    await identifyVisitor(t.runtime.deps.db, a.orgId, visitor, dup.id);
    await a.owner.contacts.merge.mutate({ primaryId: primary.id, secondaryIds: [dup.id] });
    expect((await pageViews(t, a.orgId)).find((v) => v.visitor_id === visitor)?.contact_id).toBe(primary.id);
    await anonymousView(a.orgId, visitor, '/after-merge');
    expect((await pageViews(t, a.orgId)).filter((v) => v.visitor_id === visitor).map((v) => v.contact_id)).toEqual([
      primary.id,
      primary.id,
    ]);
  });
});

describe('GET /api/embed/tracking.js', () => {
  const built = () => readFile(new URL('../../snippets/tracking/dist/tracking.js', import.meta.url));

  it('serves the built bytes as JavaScript to any origin, cacheable, with an ETag', async () => {
    const res = await fetch(`${t.origin}/api/embed/tracking.js`, {
      headers: { 'accept-encoding': 'identity', origin: 'https://shop.example' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(res.headers.get('etag')).toMatch(/^"[\w-]{27}"$/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(Buffer.from(await res.arrayBuffer())).toEqual(await built());
  });

  it('is gzipped when the client accepts it, within the 1,000-byte budget as served', async () => {
    const res = await fetch(`${t.origin}/api/embed/tracking.js`, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    // fetch decodes gzip for us; the raw size comes from the header-free route below.
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(res.headers.get('vary')).toBe('Accept-Encoding');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(await built());
    const raw = await rawGet('/api/embed/tracking.js', { 'accept-encoding': 'gzip' });
    expect(raw.length).toBeLessThanOrEqual(1000);
    expect(gunzipSync(raw)).toEqual(await built());
    // gzip;q=0 means "not gzip".
    const refused = await fetch(`${t.origin}/api/embed/tracking.js`, { headers: { 'accept-encoding': 'gzip;q=0' } });
    expect(refused.headers.get('content-encoding')).toBeNull();
  });

  it('answers 304 to a matching If-None-Match, and HEAD without a body', async () => {
    const etag = (await fetch(`${t.origin}/api/embed/tracking.js`)).headers.get('etag')!;
    const again = await fetch(`${t.origin}/api/embed/tracking.js`, { headers: { 'if-none-match': `W/${etag}, "other"` } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await fetch(`${t.origin}/api/embed/tracking.js`, { headers: { 'if-none-match': '"stale"' } })).status).toBe(200);
    const head = await fetch(`${t.origin}/api/embed/tracking.js`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });
});

/** The body bytes exactly as sent (fetch would decode gzip). */
async function rawGet(path: string, headers: Record<string, string>): Promise<Buffer> {
  const url = new URL(path, t.origin);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
