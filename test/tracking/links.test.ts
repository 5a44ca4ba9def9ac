import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import { isOwnSite, rewriteOwnLinks } from '#core/tracking/links.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestOrg, refusal, rest, type TestOrg } from '../internal/contacts-support.ts';
import { initTestApp, type TestApp } from '../support/app.ts';

const BASE = 'https://crm.example/api';

describe('rewriteOwnLinks', () => {
  it('rewrites links to the site and its subdomains only, keeping the sentence around them', () => {
    const body =
      'Hi! See https://example.com/pricing, https://www.example.com/a?x=1#y and http://shop.example.com. ' +
      'Not https://example.com.evil.test/x, https://notexample.com/ or https://other.test/example.com';
    const { body: out, links } = rewriteOwnLinks(body, 'example.com', BASE);
    expect(links.map((l) => l.url)).toEqual(['https://example.com/pricing', 'https://www.example.com/a?x=1#y', 'http://shop.example.com/']);
    const [a, b, c] = links.map((l) => `${BASE}/t/l/${l.token}`);
    expect(out).toBe(
      `Hi! See ${a}, ${b} and ${c}. Not https://example.com.evil.test/x, https://notexample.com/ or https://other.test/example.com`,
    );
    for (const l of links) expect(l.token).toMatch(/^[\w-]{22}$/);
    expect(new Set(links.map((l) => l.token)).size).toBe(3);
  });

  it('changes nothing without a site domain or without links', () => {
    expect(rewriteOwnLinks('https://example.com/', null, BASE)).toEqual({ body: 'https://example.com/', links: [] });
    expect(rewriteOwnLinks('call us at example.com', 'example.com', BASE)).toEqual({ body: 'call us at example.com', links: [] });
    expect(isOwnSite('https://EXAMPLE.com./', 'example.com')).toBe(false);
    expect(isOwnSite('https://Shop.Example.com/', 'example.com')).toBe(true);
  });
});

describe('tracked links in texts', () => {
  let t: TestApp;
  let a: TestOrg;
  let gateway: { server: Server; bodies: string[] };

  beforeAll(async () => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (d: Buffer) => (raw += d.toString()));
      req.on('end', () => {
        bodies.push((JSON.parse(raw) as { body: string }).body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `gw-${bodies.length}` }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    gateway = { server, bodies };
    t = await initTestApp({
      BASE_URL: BASE,
      SMS_PROVIDER: 'http',
      SMS_PROVIDER_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`,
    });
    a = await newTestOrg(t);
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => gateway?.server.close(resolve));
  });

  async function textableContact(email: string) {
    const c = await a.owner.contacts.create.mutate({ email, firstName: 'Tess', phone: '+442079460018' });
    await t.sql('update contacts set sms_consent = true where id = ?', [c.id]);
    return c;
  }

  it('keeps the site domain as an organization setting, normalised, for owners and admins', async () => {
    expect(await a.member.tracking.settings.query()).toEqual({ siteDomain: null });
    expect(await a.owner.tracking.updateSettings.mutate({ siteDomain: 'https://WWW.Example.com/home' })).toEqual({
      siteDomain: 'example.com',
    });
    expect((await rest(t, 'GET', '/tracking/settings', a.memberKey)).body).toEqual({ siteDomain: 'example.com' });
    expect(await refusal(a.member.tracking.updateSettings.mutate({ siteDomain: 'evil.test' }))).toMatchObject({
      status: 403,
      code: 'forbidden_role',
    });
    const bad = await rest(t, 'PATCH', '/tracking/settings', a.ownerKey, { siteDomain: 'localhost' });
    expect(bad).toMatchObject({ status: 400, body: { code: 'validation_failed', issues: [{ path: 'siteDomain' }] } });
    expect(await a.admin.tracking.updateSettings.mutate({ siteDomain: null })).toEqual({ siteDomain: null });
    await a.owner.tracking.updateSettings.mutate({ siteDomain: 'example.com' });
  });

  it('rewrites own-site links in a text, sends and stores it so; the link redirects with the contact and emits link_clicked', async () => {
    await a.owner.tracking.updateSettings.mutate({ siteDomain: 'example.com' });
    const c = await textableContact('tess@example.org');
    const sent = await a.owner.messages.send.mutate({
      contactId: c.id,
      body: 'Your quote: https://www.example.com/quote?id=7 (or https://other.test/x)',
    });
    const match = /^Your quote: https:\/\/crm\.example\/api\/t\/l\/([\w-]{22}) \(or https:\/\/other\.test\/x\)$/.exec(sent.body);
    expect(match, sent.body).not.toBeNull();
    expect(gateway.bodies.at(-1)).toBe(sent.body);
    // The text carries the public address (BASE_URL); the test reaches the same route on the local server.
    const link = `${t.origin}/api/t/l/${match![1]!}`;

    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`https://www.example.com/quote?id=7&c=${c.id}`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const events = await t.sql<{ id: string; payload: any }>(
      `select id, payload from outbox_events where organization_id = ? and event = 'tracking.link_clicked'`,
      [a.orgId],
    );
    expect(events.map((e) => e.payload)).toEqual([
      {
        id: events[0]!.id,
        event: 'tracking.link_clicked',
        timestamp: expect.any(String),
        source: 'inbound',
        data: {
          email: null,
          message: { id: sent.id },
          url: 'https://www.example.com/quote?id=7',
          contact: { id: c.id, firstName: 'Tess', email: 'tess@example.org' },
        },
      },
    ]);
    expect(EVENT_CATALOGUE['tracking.link_clicked'].payload.parse(events[0]!.payload)).toEqual(events[0]!.payload);

    // A link preview asking for the headers only is redirected but not counted.
    const head = await fetch(link, { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(302);
    expect(
      await t.sql(`select 1 from outbox_events where organization_id = ? and event = 'tracking.link_clicked'`, [a.orgId]),
    ).toHaveLength(1);
  });

  it('leaves texts alone without a site domain, and answers unknown or malformed tokens with 404', async () => {
    await a.owner.tracking.updateSettings.mutate({ siteDomain: null });
    const c = await textableContact('plain@example.org');
    const sent = await a.owner.messages.send.mutate({ contactId: c.id, body: 'See https://example.com/' });
    expect(sent.body).toBe('See https://example.com/');
    for (const token of ['AAAAAAAAAAAAAAAAAAAAAA', 'short', '%3Cscript%3E']) {
      const res = await fetch(`${t.origin}/api/t/l/${token}`, { redirect: 'manual' });
      expect(res.status, token).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'not_found' });
    }
  });

  it("still leads a trashed contact's link to the site, without the contact and without an event", async () => {
    await a.owner.tracking.updateSettings.mutate({ siteDomain: 'example.com' });
    const c = await textableContact('gone@example.org');
    const sent = await a.owner.messages.send.mutate({ contactId: c.id, body: 'https://example.com/offer' });
    await a.owner.contacts.delete.mutate({ id: c.id });
    const before = await t.sql(`select 1 from outbox_events where organization_id = ? and event = 'tracking.link_clicked'`, [a.orgId]);
    const res = await fetch(sent.body.replace(BASE, `${t.origin}/api`), { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.com/offer');
    expect(await t.sql(`select 1 from outbox_events where organization_id = ? and event = 'tracking.link_clicked'`, [a.orgId])).toEqual(
      before,
    );
  });
});
