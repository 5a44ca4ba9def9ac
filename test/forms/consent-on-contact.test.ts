import { buildInternalOpenApiDocument, buildV1OpenApiDocument } from '#core/openapi/documents.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestOrg, rest, type TestOrg } from '../internal/contacts-support.ts';
import { call, type TestApp } from '../support/app.ts';
import type { SmtpInbox } from '../mail/smtp-inbox.ts';
import { type MailApp, startMailApp } from '../mail/support.ts';
import { submitJson } from './support.ts';

/**
 * Consent on the contact read (issue 30): `consent` by purpose on `GET /v1/contacts/{id}` and on the application's
 * `contacts.get`, derived from the consent entries that forms, confirmation pages and unsubscribe links record; `{}`
 * without entries; out of lists and write answers; never set by a key or a contact write.
 */
let t: TestApp;
let smtp: SmtpInbox;
let org: TestOrg;
const APP = 'https://app.leadwire.test';

let mail: MailApp;

beforeAll(async () => {
  mail = await startMailApp({ APP_URL: APP });
  ({ t, smtp } = mail);
  org = await newTestOrg(t);
});
afterAll(() => mail?.close());

const NEWS = { purpose: 'email_marketing', text: 'Send me product news by email.', version: '2026-11' };
const PARTNERS = { purpose: 'partner_offers', text: 'Share my details with Example partners.', version: 'v3' };
const SMS = { purpose: 'sms', text: 'Text me about my orders.', version: 's1' };
let seq = 0;
const email = () => `on-contact${++seq}-${Date.now()}@example.com`;

const consentForm = (doubleOptIn: boolean, purposes: object[]) =>
  org.owner.forms.create.mutate({
    name: doubleOptIn ? 'Double opt-in' : 'Single opt-in',
    published: true,
    fields: [{ id: 'email', label: 'Email', type: 'email', required: true }],
    consent: { doubleOptIn, purposes: purposes as never },
  });
const contactIdOf = async (address: string) =>
  (await t.sql<{ id: string }>('select id from contacts where organization_id = ? and email = ?', [org.orgId, address]))[0]!.id;
const local = (link: string) => link.replace(APP, t.origin);
const press = (link: string) =>
  fetch(local(link.split('?')[0]!), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: new URL(link).searchParams.get('token')! }).toString(),
    redirect: 'manual',
  });

/** The contact's consent as both reads show it; they must agree. */
async function consentOnBothSurfaces(id: string) {
  const v1 = await call(t, 'GET', `/contacts/${id}`, { key: org.publicKey });
  expect(v1.status).toBe(200);
  const app = await rest(t, 'GET', `/contacts/${id}`, org.ownerKey);
  expect(app.status).toBe(200);
  expect(app.body.contact.consent).toEqual(v1.body.consent);
  return v1.body.consent as Record<string, { status: string; method: string; version: string | null; at: string }>;
}

describe('consent on the contact read', () => {
  it('says per purpose what holds: the latest grant or withdrawal, else the latest answer; expired once a link lapses', async () => {
    const address = email();
    // email_marketing: ticked under double opt-in, confirmed, then withdrawn through the mail's unsubscribe link.
    await submitJson(t, (await consentForm(true, [NEWS])).id, { email: address, _consent_email_marketing: true });
    const mail = await smtp.next(address);
    expect((await press(mail.link)).status).toBe(303);
    const unsubscribe = /Unsubscribe at any time: (\S+)/.exec(mail.text)![1]!;
    expect((await press(unsubscribe)).status).toBe(303);
    // A later form left unticked withdraws nothing and grants nothing: the withdrawal still decides.
    await submitJson(t, (await consentForm(false, [NEWS, SMS])).id, { email: address });
    // partner_offers: ticked under double opt-in, not confirmed.
    await submitJson(t, (await consentForm(true, [PARTNERS])).id, { email: address, _consent_partner_offers: true });
    const id = await contactIdOf(address);

    const history = (await call(t, 'GET', `/contacts/${id}/consents`, { key: org.publicKey })).body.entries as {
      id: string;
      purpose: string;
      status: string;
      at: string;
    }[];
    const atOf = (purpose: string, status: string) => history.find((e) => e.purpose === purpose && e.status === status)!.at;
    const consent = await consentOnBothSurfaces(id);
    expect(consent).toEqual({
      email_marketing: { status: 'withdrawn', method: 'unsubscribe_link', version: NEWS.version, at: atOf('email_marketing', 'withdrawn') },
      partner_offers: { status: 'pending', method: 'double_opt_in', version: PARTNERS.version, at: atOf('partner_offers', 'pending') },
      sms: { status: 'declined', method: 'single_opt_in', version: SMS.version, at: atOf('sms', 'declined') },
    });
    expect(Object.keys(consent)).toEqual(['email_marketing', 'partner_offers', 'sms']);

    t.clock.advance(7 * 86_400_000 + 1000);
    try {
      const later = await consentOnBothSurfaces(id);
      expect(later.partner_offers).toMatchObject({ status: 'expired', method: 'double_opt_in' });
      expect(later.email_marketing!.status).toBe('withdrawn');
    } finally {
      t.clock.set(new Date());
    }
  });

  it('a grant decides over a later unconfirmed double opt-in; the contact without entries reads {}', async () => {
    const address = email();
    await submitJson(t, (await consentForm(false, [NEWS])).id, { email: address, _consent_email_marketing: true });
    await submitJson(t, (await consentForm(true, [NEWS])).id, { email: address, _consent_email_marketing: true });
    const id = await contactIdOf(address);
    expect((await consentOnBothSurfaces(id)).email_marketing).toMatchObject({ status: 'granted', method: 'single_opt_in' });

    const none = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: email() } });
    expect(await consentOnBothSurfaces(none.body.id)).toEqual({});
  });

  it('is on the reads only: not in pages, nor in write answers, nor in contact events', async () => {
    const address = email();
    await submitJson(t, (await consentForm(false, [NEWS])).id, { email: address, _consent_email_marketing: true });
    const id = await contactIdOf(address);
    const page = await call(t, 'GET', '/contacts?limit=100', { key: org.publicKey });
    expect(page.body.items.find((c: { id: string }) => c.id === id)).not.toHaveProperty('consent');
    const appPage = await rest(t, 'GET', `/contacts?email=${encodeURIComponent(address)}`, org.ownerKey);
    expect(appPage.body.items[0]).not.toHaveProperty('consent');
    const upserted = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: address, firstName: 'Ada' } });
    expect(Object.keys(upserted.body).sort()).toEqual(['created', 'id', 'matchedBy']);
    const updated = await rest(t, 'POST', `/contacts/${id}/update`, org.ownerKey, { lastName: 'Lovelace' });
    expect(updated.status).toBe(200);
    expect(updated.body).not.toHaveProperty('consent');
    const events = await t.sql<{ payload: { data: { contact: object } } }>(
      `select payload from outbox_events where event like 'contact.%' and payload->'data'->'contact'->>'id' = ?`,
      [id],
    );
    expect(events.length).toBeGreaterThanOrEqual(2);
    for (const e of events) expect(e.payload.data.contact).not.toHaveProperty('consent');
  });
});

describe('nothing but the consent record sets it', () => {
  it('a key sending consent to the upserts, or a member to contact writes, changes nothing', async () => {
    const address = email();
    await submitJson(t, (await consentForm(false, [NEWS])).id, { email: address, _consent_email_marketing: true });
    const id = await contactIdOf(address);
    const before = await consentOnBothSurfaces(id);
    const forged = { email_marketing: { status: 'withdrawn', method: 'single_opt_in', version: 'x', at: new Date().toISOString() } };
    const sms = { sms: { status: 'granted', method: 'single_opt_in', version: 'x', at: new Date().toISOString() } };

    await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: address, consent: forged } });
    await call(t, 'POST', '/contacts/batch-upsert', { key: org.publicKey, body: { contacts: [{ email: address, consent: sms }] } });
    await call(t, 'POST', '/leads', { key: org.publicKey, body: { email: address, consent: sms } });
    expect((await rest(t, 'POST', `/contacts/${id}/update`, org.ownerKey, { consent: forged, firstName: 'Ada' })).status).toBe(200);
    const created = await rest(t, 'POST', '/contacts', org.ownerKey, { email: email(), consent: sms });
    expect(created.status).toBe(201);
    // The application's surface refuses a public key outright.
    const refused = await rest(t, 'POST', `/contacts/${id}/update`, org.publicKey, { consent: forged });
    expect([refused.status, refused.body.code]).toEqual([403, 'wrong_api_surface']);

    expect(await consentOnBothSurfaces(id)).toEqual(before);
    expect(before.email_marketing!.status).toBe('granted');
    expect(await consentOnBothSurfaces(created.body.id)).toEqual({});
    expect(await t.sql('select id from consent_entries where contact_id = any(?::uuid[])', [[id, created.body.id]])).toHaveLength(1);
  });
});

describe('the OpenAPI documents', () => {
  const resolve = (doc: any, schema: any): any => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);
  const ok = (doc: any, path: string, method: string) =>
    resolve(doc, doc.paths[path][method].responses['200'].content['application/json'].schema);

  it('describe consent on both contact reads, read-only, and nowhere in pages or upsert answers', () => {
    const v1 = buildV1OpenApiDocument('http://localhost:3000/api') as any;
    const internal = buildInternalOpenApiDocument('http://localhost:3000/api') as any;
    const consent = v1.components.schemas.ContactConsent;
    expect(consent.type).toBe('object');
    expect(consent.description).toMatch(/Read-only/);
    expect(consent.additionalProperties.properties.status.enum).toEqual(['granted', 'withdrawn', 'pending', 'expired', 'declined']);
    expect(consent.additionalProperties.required).toEqual(['status', 'method', 'version', 'at']);

    const read = ok(v1, '/contacts/{id}', 'get');
    expect(read.required).toContain('consent');
    expect(read.properties.consent.$ref).toBe('#/components/schemas/ContactConsent');
    const appRead = resolve(internal, ok(internal, '/contacts/{id}', 'get').properties.contact);
    expect(appRead.required).toContain('consent');
    expect(appRead.properties.consent.$ref).toBe('#/components/schemas/ContactConsent');

    expect(resolve(v1, ok(v1, '/contacts', 'get').properties.items.items).properties).not.toHaveProperty('consent');
    expect(ok(v1, '/contacts/upsert', 'post').properties).not.toHaveProperty('consent');
    expect(resolve(v1, v1.paths['/contacts/upsert'].post.requestBody.content['application/json'].schema).properties).not.toHaveProperty(
      'consent',
    );
    expect(resolve(internal, ok(internal, '/contacts', 'get').properties.items.items).properties).not.toHaveProperty('consent');
  });
});
