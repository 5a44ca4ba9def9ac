/**
 * Every URL a user writes refuses control characters (C0, DEL, C1) when written, as a 400 naming the field, and
 * stores nothing (issue 16, section 4). The form's redirect has its own file (test/forms/redirect.test.ts); the page
 * view's URL is among the collect endpoint's refusals (test/tracking/collect.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { automation, testResolver } from '../automation/support.ts';
import { newTestOrg, rest, type TestOrg } from './contacts-support.ts';

let t: TestApp;
let a: TestOrg;
beforeAll(async () => {
  t = await initTestApp({}, { resolver: testResolver });
  a = await newTestOrg(t);
});
afterAll(async () => t?.close());

/** A line break (the header-splitting one), a tab, another C0 control, DEL, and two C1 controls (NEL, CSI). */
const CONTROLS = ['\r\n', '\n', '\t', '\u0007', '\u007f', '\u0085', '\u009b'];
const withControl = (c: string) => `https://hooks.example.com/a${c}b`;
const pathsOf = (body: { issues?: { path: string; message: string }[] }) => body.issues?.map((i) => i.path);
const count = async (table: string) =>
  (await t.sql<{ n: number }>(`select count(*)::int as n from ${table} where organization_id = ?`, [a.orgId]))[0]!.n;

describe('control characters in user-written URLs', () => {
  it('a webhook endpoint URL: 400 naming url, on create and update; nothing stored', async () => {
    const good = 'https://hooks.example.com/leadwire';
    const endpoint = await rest(t, 'POST', '/webhooks', a.ownerKey, { url: good, events: ['contact.created'] });
    expect(endpoint.status).toBe(201);
    for (const c of CONTROLS) {
      const r = await rest(t, 'POST', '/webhooks', a.ownerKey, { url: withControl(c), events: ['contact.created'] });
      expect(r.status, JSON.stringify(c)).toBe(400);
      expect(r.body).toMatchObject({
        code: 'validation_failed',
        issues: [{ path: 'url', message: expect.stringMatching(/control characters/) }],
      });
      const updated = await rest(t, 'PATCH', `/webhooks/${endpoint.body.id}`, a.ownerKey, { url: withControl(c) });
      expect(updated).toMatchObject({ status: 400, body: { code: 'validation_failed', issues: [{ path: 'url' }] } });
    }
    expect(await t.sql(`select url from webhook_endpoints where organization_id = ?`, [a.orgId])).toEqual([{ url: good }]);
  });

  it('an automation hookUrl: 400 naming hookUrl; nothing stored', async () => {
    for (const c of CONTROLS) {
      const r = await automation(
        t,
        'POST',
        '/subscribe',
        { apiKey: a.ownerKey },
        { hookUrl: withControl(c), triggerEvent: 'contact.created' },
      );
      expect(r.status, JSON.stringify(c)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      expect(pathsOf(r.body)).toEqual(['hookUrl']);
    }
    expect(await count('webhook_endpoints')).toBe(1);
  });

  it("a contact's website and LinkedIn address: 400 naming the field, on create and update; nothing changed", async () => {
    const contact = await a.owner.contacts.create.mutate({ email: 'web@example.com', website: 'https://web.example' });
    for (const c of CONTROLS) {
      for (const field of ['website', 'linkedin']) {
        const created = await rest(t, 'POST', '/contacts', a.ownerKey, {
          email: 'other@example.com',
          [field]: `https://web.example/${c}x`,
        });
        expect(created.status, `${field} ${JSON.stringify(c)}`).toBe(400);
        expect(pathsOf(created.body)).toEqual([field]);
        const updated = await rest(t, 'POST', `/contacts/${contact.id}/update`, a.ownerKey, { [field]: `https://web.example/${c}x` });
        expect(updated.status).toBe(400);
        expect(pathsOf(updated.body)).toEqual([field]);
      }
    }
    expect(await t.sql(`select email, website, linkedin from contacts where organization_id = ?`, [a.orgId])).toEqual([
      { email: 'web@example.com', website: 'https://web.example', linkedin: null },
    ]);
  });
});
