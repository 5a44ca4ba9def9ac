import { randomUUID } from 'node:crypto';
import { captureFormId } from '#core/capture/service.ts';
import { EVENT_CATALOGUE } from '#core/events/catalogue.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { newTestOrg, type TestOrg } from '../internal/contacts-support.ts';
import { collect, pageViews, VISITOR_A } from '../tracking/support.ts';
import { capture, captureSubmissions, footprint, formSubmittedEvents } from './support.ts';

let t: TestApp;
let a: TestOrg;
beforeAll(async () => {
  t = await initTestApp();
  a = await newTestOrg(t);
});
afterAll(async () => t?.close());

const contactsWith = (orgId: string, email: string) =>
  t.sql<{ id: string; source: string; lead_score: number; first_name: string | null; last_name: string | null; phone: string | null }>(
    `select id, source, lead_score, first_name, last_name, phone from contacts where organization_id = ? and email = ?`,
    [orgId, email],
  );

describe('POST /api/capture/<org_id>: the universal form', () => {
  it('creates the contact (source form), keeps the submission, places it, emits form.submitted and attaches the visitor', async () => {
    const org = await newTestOrg(t);
    // The same browser read a page before: an anonymous view under its visitor id.
    expect((await collect(t, { org: org.orgId, url: 'https://shop.example/pricing', visitor: VISITOR_A })).status).toBe(202);
    const r = await capture(t, org.orgId, {
      name: 'Ada Lovelace',
      email: 'Ada@Example.com',
      phone: '+44 20 7946 0000',
      message: 'Call me',
      company: 'not a field',
      _hp_field: '',
      utm_source: 'news',
      _referrer: 'https://www.google.com/',
      _landingPage: 'https://shop.example/contact',
      _visitor: VISITOR_A,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ ok: true, message: 'Thank you! Your answers have been received.' });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    expect(r.headers.get('x-ratelimit-limit')).toBe('100');
    expect(r.headers.get('x-ratelimit-remaining')).toBe('99');

    const [contact] = await contactsWith(org.orgId, 'ada@example.com');
    // email 15 + phone 10 + form source 10
    expect(contact).toMatchObject({ source: 'form', lead_score: 35, first_name: 'Ada', last_name: 'Lovelace', phone: '+44 20 7946 0000' });
    const [sub] = await captureSubmissions(t, org.orgId);
    expect(sub).toMatchObject({
      form_id: null,
      form_name: 'Universal lead capture',
      contact_id: contact!.id,
      answers: { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0000', message: 'Call me' },
      attribution: { utm: { source: 'news' }, referrer: 'https://www.google.com/', landingPage: 'https://shop.example/contact' },
    });
    expect(sub!.pipeline_item_id).toEqual(expect.any(String));

    const [event] = await formSubmittedEvents(t, org.orgId);
    expect(event).toEqual({
      id: expect.any(String),
      event: 'form.submitted',
      timestamp: expect.any(String),
      source: 'inbound',
      data: {
        form: { id: captureFormId(org.orgId, 'Universal lead capture'), name: 'Universal lead capture' },
        submission: { id: sub!.id, fields: sub!.answers, pageUrl: 'https://shop.example/contact', attribution: sub!.attribution },
        contact: { id: contact!.id, firstName: 'Ada', email: 'ada@example.com' },
      },
    });
    expect(EVENT_CATALOGUE['form.submitted'].payload.parse(event)).toEqual(event);
    // The browser's earlier anonymous view is now hers.
    expect((await pageViews(t, org.orgId)).map((v) => v.contact_id)).toEqual([contact!.id]);
  });

  it('matches the contact by email on a second capture, under the same synthetic form id', async () => {
    const org = await newTestOrg(t);
    await capture(t, org.orgId, { email: 'grace@example.com' });
    const again = await capture(t, org.orgId, { email: ' GRACE@example.com ', name: 'Grace' });
    expect(again.status).toBe(200);
    expect(await contactsWith(org.orgId, 'grace@example.com')).toHaveLength(1);
    const events = await formSubmittedEvents(t, org.orgId);
    expect(events.map((e) => [e.data.form.id, e.data.contact.id])).toEqual([
      [captureFormId(org.orgId, 'Universal lead capture'), events[0].data.contact.id],
      [captureFormId(org.orgId, 'Universal lead capture'), events[0].data.contact.id],
    ]);
    // Another workspace's universal form is another form.
    expect(captureFormId(a.orgId, 'Universal lead capture')).not.toBe(events[0].data.form.id);
  });

  it('fakes a success for a filled honeypot and keeps nothing, not even a count against the limit', async () => {
    const org = await newTestOrg(t);
    const before = await footprint(t, org.orgId);
    const r = await capture(t, org.orgId, { email: 'bot@example.com', _hp_field: 'https://spam.example' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, message: 'Thank you! Your answers have been received.' });
    expect(await footprint(t, org.orgId)).toEqual(before);
    expect(await t.sql(`select 1 from rate_limit_counters where bucket = ?`, [`capture:${org.orgId}`])).toEqual([]);
  });
});

describe('POST /api/capture/<org_id>: a plain page form', () => {
  it("keeps its answers under their own names, labelled by _form, without the page's bookkeeping keys", async () => {
    const org = await newTestOrg(t);
    const r = await capture(t, org.orgId, {
      _form: 'Newsletter',
      email: 'lin@example.com',
      name: 'Lin Chen',
      'your-company': 'Acme',
      topics: 'Pricing, Demo',
      _token: 'csrf',
      _wpnonce: 'n',
      utm_medium: 'email',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [sub] = await captureSubmissions(t, org.orgId);
    expect(sub).toMatchObject({
      form_id: null,
      form_name: 'Newsletter',
      answers: { email: 'lin@example.com', name: 'Lin Chen', 'your-company': 'Acme', topics: 'Pricing, Demo' },
      attribution: { utm: { medium: 'email' } },
    });
    expect(Object.keys(sub!.answers).sort()).toEqual(['email', 'name', 'topics', 'your-company']);
    expect(await contactsWith(org.orgId, 'lin@example.com')).toEqual([
      expect.objectContaining({ source: 'form', first_name: 'Lin', last_name: 'Chen' }),
    ]);
    const [event] = await formSubmittedEvents(t, org.orgId);
    expect(event.data.form).toEqual({ id: captureFormId(org.orgId, 'Newsletter'), name: 'Newsletter' });
    expect(EVENT_CATALOGUE['form.submitted'].payload.parse(event)).toEqual(event);
  });

  it('calls a form without a name "Website form"', async () => {
    const org = await newTestOrg(t);
    expect((await capture(t, org.orgId, { _form: '', email: 'mo@example.com' })).status).toBe(200);
    expect((await captureSubmissions(t, org.orgId))[0]?.form_name).toBe('Website form');
  });
});

describe('refusals: nothing partial is saved', () => {
  const cases: [string, () => Promise<{ status: number; body: any }>, number, string][] = [
    ['no email', () => capture(t, a.orgId, { name: 'Nobody' }), 400, 'validation_failed'],
    ['a malformed email', () => capture(t, a.orgId, { email: 'not-an-email' }), 400, 'validation_failed'],
    ['a page form without an email', () => capture(t, a.orgId, { _form: 'Quote', company: 'Acme' }), 400, 'validation_failed'],
    ['an object as a value', () => capture(t, a.orgId, { email: 'x@example.com', name: { first: 'X' } }), 400, 'validation_failed'],
    ['a NUL in a value', () => capture(t, a.orgId, { email: 'x@example.com', message: 'a\u0000b' }), 400, 'validation_failed'],
    [
      'a NUL in a page field name',
      () => capture(t, a.orgId, { _form: 'Q', email: 'x@example.com', 'a\u0000b': '1' }),
      400,
      'validation_failed',
    ],
    ['a _form that is not text', () => capture(t, a.orgId, { _form: 42, email: 'x@example.com' }), 400, 'validation_failed'],
    [
      'a page form of 60 fields',
      () =>
        capture(t, a.orgId, {
          _form: 'Q',
          email: 'x@example.com',
          ...Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, 'v'])),
        }),
      400,
      'validation_failed',
    ],
    ['a JSON array', () => capture(t, a.orgId, '[{"email":"x@example.com"}]'), 400, 'validation_failed'],
    ['broken JSON', () => capture(t, a.orgId, '{"email":'), 400, 'malformed_json'],
    ['an empty body', () => capture(t, a.orgId, ''), 400, 'malformed_json'],
    [
      'bytes that are not UTF-8',
      () => capture(t, a.orgId, new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])),
      400,
      'malformed_json',
    ],
    ['a body over 32 KB', () => capture(t, a.orgId, { email: 'x@example.com', message: 'x'.repeat(33 * 1024) }), 413, 'payload_too_large'],
    [
      'a urlencoded body',
      () => capture(t, a.orgId, 'email=x%40example.com', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'unsupported_media_type',
    ],
    [
      'a charset other than UTF-8',
      () => capture(t, a.orgId, '{"email":"x@example.com"}', { 'content-type': 'text/plain; charset=latin1' }),
      415,
      'unsupported_media_type',
    ],
    [
      'a gzip body',
      () => capture(t, a.orgId, '{"email":"x@example.com"}', { 'content-encoding': 'gzip' }),
      415,
      'unsupported_content_encoding',
    ],
  ];
  it.each(cases)('%s', async (_name, send, status, code) => {
    const before = await footprint(t, a.orgId);
    const r = await send();
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.body).toMatchObject({ code, error: expect.any(String) });
    expect(await footprint(t, a.orgId)).toEqual(before);
  });

  it('names the field a problem is about', async () => {
    const r = await capture(t, a.orgId, { email: 'not-an-email' });
    expect(r.body.issues).toEqual([{ path: 'email', message: 'Email must be a valid email address' }]);
  });

  it('gives 404 for an unknown or malformed workspace id, with CORS so the form can say so', async () => {
    for (const org of [randomUUID(), 'not-a-uuid']) {
      const r = await capture(t, org, { email: 'x@example.com' });
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ code: 'not_found' });
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('accepts application/json too, and answers a CORS preflight from any origin without credentials', async () => {
    const org = await newTestOrg(t);
    expect((await capture(t, org.orgId, { email: 'json@example.com' }, { 'content-type': 'application/json' })).status).toBe(200);
    const pre = await fetch(`${t.origin}/api/capture/${org.orgId}`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://elsewhere.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(pre.headers.get('access-control-allow-headers')).toBe('content-type');
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
  });
});
