import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestOrg, rest, type TestOrg } from '../internal/contacts-support.ts';
import { call, type TestApp } from '../support/app.ts';
import type { SmtpInbox } from '../mail/smtp-inbox.ts';
import { type MailApp, startMailApp } from '../mail/support.ts';
import { submitJson } from './support.ts';

/**
 * Consent with evidence and double opt-in (issue 30) over HTTP, with the real SMTP server the mail tests use: the
 * entries a submission leaves, the confirmation mail, its link's page (a GET changes nothing), the confirmation, the
 * deadline, the unsubscribe link, and the read-only record on both surfaces.
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

const NEWS = { purpose: 'email_marketing', text: 'Send me product news by email. I can unsubscribe at any time.', version: '2026-11' };
const PARTNERS = { purpose: 'partner_offers', text: 'Share my details with Example partners.', version: 'v3' };
let seq = 0;
const email = () => `consent${++seq}-${Date.now()}@example.com`;

async function consentForm(doubleOptIn: boolean, purposes: object[] = [NEWS, PARTNERS]) {
  return org.owner.forms.create.mutate({
    name: doubleOptIn ? 'Newsletter (double opt-in)' : 'Newsletter',
    published: true,
    fields: [{ id: 'email', label: 'Email', type: 'email', required: true }],
    consent: { doubleOptIn, purposes: purposes as never },
  });
}
const contactOf = async (address: string) =>
  (
    await t.sql<{ id: string; email_consent: boolean }>('select id, email_consent from contacts where organization_id = ? and email = ?', [
      org.orgId,
      address,
    ])
  )[0]!;
const entries = (contactId: string) =>
  t.sql<Record<string, any>>('select * from consent_entries where contact_id = ? order by created_at, purpose', [contactId]);
const consentEvents = async (contactId: string) =>
  (
    await t.sql<{ payload: any }>(
      `select payload from outbox_events where event = 'contact.consent_changed' and payload->'data'->'contact'->>'id' = ? order by created_at, seq`,
      [contactId],
    )
  ).map((r) => r.payload.data.consent);
/** A link of the mail as the server sees it: the path and query under the app address. */
const local = (link: string) => link.replace(APP, t.origin);
const post = (link: string, body: Record<string, string>) =>
  fetch(local(link.split('?')[0]!) + (body.token ? '' : `?${link.split('?')[1]}`), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
    redirect: 'manual',
  });
const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;

describe('a single opt-in form', () => {
  it('records an entry per purpose with its exact text, version, form, page and method, an address hash, never the address', async () => {
    const form = await consentForm(false);
    const address = email();
    const res = await submitJson(t, form.id, {
      email: address,
      _consent_email_marketing: true,
      _landingPage: 'https://www.example.com/news',
    });
    expect(res.status).toBe(200);
    const contact = await contactOf(address);
    const rows = await entries(contact.id);
    expect(rows.map((r) => [r.purpose, r.status, r.method, r.text, r.version, r.form_id, r.form_name, r.page_url])).toEqual([
      ['email_marketing', 'granted', 'single_opt_in', NEWS.text, NEWS.version, form.id, 'Newsletter', 'https://www.example.com/news'],
      [
        'partner_offers',
        'declined',
        'single_opt_in',
        PARTNERS.text,
        PARTNERS.version,
        form.id,
        'Newsletter',
        'https://www.example.com/news',
      ],
    ]);
    expect(rows[0]!.ip_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toMatch(/127\.0\.0\.1|::1/);
    expect(contact.email_consent).toBe(true);
    expect(await consentEvents(contact.id)).toEqual([
      expect.objectContaining({
        purpose: 'email_marketing',
        granted: true,
        method: 'single_opt_in',
        text: NEWS.text,
        entryId: rows[0]!.id,
      }),
    ]);
    // A second grant adds its evidence and changes nothing: no second event. Not ticking again is no withdrawal.
    await submitJson(t, form.id, { email: address, _consent_email_marketing: 'on' });
    await submitJson(t, form.id, { email: address });
    expect((await entries(contact.id)).map((r) => r.status)).toEqual([
      'granted',
      'declined',
      'granted',
      'declined',
      'declined',
      'declined',
    ]);
    expect(await consentEvents(contact.id)).toHaveLength(1);
    expect((await contactOf(address)).email_consent).toBe(true);
  });

  it('refuses a required box left unticked (400 naming it), and keeps nothing', async () => {
    const form = await consentForm(false, [{ ...NEWS, required: true }]);
    const address = email();
    const res = await submitJson(t, form.id, { email: address });
    expect(res.status).toBe(400);
    expect(res.body.issues).toEqual([{ path: '_consent_email_marketing', message: `"${NEWS.text}" must be accepted to send this form` }]);
    expect(await t.sql('select id from contacts where email = ?', [address])).toEqual([]);
    expect((await submitJson(t, form.id, { email: address, _consent_email_marketing: 'maybe' })).status).toBe(400);
  });
});

describe('a double opt-in form', () => {
  it('keeps a ticked box pending and mails a link; opening it grants nothing; pressing Confirm grants once', async () => {
    const form = await consentForm(true, [NEWS]);
    const address = email();
    expect((await submitJson(t, form.id, { email: address, _consent_email_marketing: true })).status).toBe(200);
    const contact = await contactOf(address);
    const [pending] = await entries(contact.id);
    expect(pending).toMatchObject({ status: 'pending', method: 'double_opt_in', text: NEWS.text });
    expect(new Date(pending!.expires_at).getTime() - t.clock.now().getTime()).toBeGreaterThan(6.9 * 86_400_000);
    expect(contact.email_consent).toBe(false);
    expect(await consentEvents(contact.id)).toEqual([]);

    const mail = await smtp.next(address);
    expect(mail.template).toBe('consent_confirmation');
    expect(mail.text).toContain(NEWS.text);
    expect(mail.link).toMatch(new RegExp(`^${APP}/consent/confirm\\?token=`));
    const unsubscribe = /Unsubscribe at any time: (\S+)/.exec(mail.text)![1]!;
    // Headers as a mail client reads them: long ones are folded over lines.
    const headers = mail.raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
    expect(headers).toMatch(/List-Unsubscribe: <https:\/\/app\.leadwire\.test\/consent\/withdraw\?token=/);
    expect(headers).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');

    // A mail scanner or preview opens the link: a page with a button, nothing granted.
    for (let i = 0; i < 2; i++) {
      const page = await fetch(local(mail.link));
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      const text = await page.text();
      expect(text).toContain('Confirm your subscription');
      expect(text).toContain('Send me product news by email.');
    }
    expect(await entries(contact.id)).toHaveLength(1);
    expect(await consentEvents(contact.id)).toEqual([]);

    const confirmed = await post(mail.link, { token: tokenOf(mail.link) });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get('location')).toBe('confirm/done');
    const after = await entries(contact.id);
    expect(after.map((r) => [r.status, r.method, r.confirms])).toEqual([
      ['pending', 'double_opt_in', null],
      ['granted', 'double_opt_in', pending!.id],
    ]);
    expect(after[1]!.text).toBe(NEWS.text);
    expect((await contactOf(address)).email_consent).toBe(true);
    expect(await consentEvents(contact.id)).toEqual([
      expect.objectContaining({ granted: true, method: 'double_opt_in', entryId: after[1]!.id }),
    ]);
    // Pressing again (a double click, a reload that re-posts) confirms nothing twice.
    expect((await post(mail.link, { token: tokenOf(mail.link) })).status).toBe(303);
    expect(await entries(contact.id)).toHaveLength(2);
    expect(await (await fetch(local(mail.link))).text()).toContain('Already confirmed');

    // The unsubscribe link: its page asks, the button withdraws.
    expect(await (await fetch(local(unsubscribe))).text()).toContain(`Unsubscribe ${address}`);
    expect(await entries(contact.id)).toHaveLength(2);
    expect((await post(unsubscribe, { token: tokenOf(unsubscribe) })).status).toBe(303);
    expect((await entries(contact.id)).at(-1)).toMatchObject({ status: 'withdrawn', method: 'unsubscribe_link', text: NEWS.text });
    expect((await contactOf(address)).email_consent).toBe(false);
    expect((await consentEvents(contact.id)).map((c) => [c.granted, c.method])).toEqual([
      [true, 'double_opt_in'],
      [false, 'unsubscribe_link'],
    ]);
  });

  it('refuses an expired link (410) and a forged one (400), granting nothing; a mail client’s one-click unsubscribe works', async () => {
    const form = await consentForm(true, [NEWS]);
    const address = email();
    await submitJson(t, form.id, { email: address, _consent_email_marketing: true });
    const mail = await smtp.next(address);
    const contact = await contactOf(address);
    const token = tokenOf(mail.link);
    const forged = `${token.slice(0, -4)}AAAA`;
    expect((await fetch(`${t.origin}/consent/confirm?token=${encodeURIComponent(forged)}`)).status).toBe(400);
    expect((await post(mail.link, { token: forged })).status).toBe(400);

    t.clock.advance(7 * 86_400_000 + 1000);
    try {
      const page = await fetch(local(mail.link));
      expect(page.status).toBe(410);
      expect(await page.text()).toContain('This link has expired');
      expect((await post(mail.link, { token })).status).toBe(410);
      expect((await entries(contact.id)).map((r) => r.status)).toEqual(['pending']);
      const record = await rest(t, 'GET', `/contacts/${contact.id}/consents`, org.ownerKey);
      expect(record.body.entries[0]).toMatchObject({ status: 'pending', expired: true });
      expect(record.body.purposes).toEqual([]);
    } finally {
      t.clock.set(new Date());
    }
    // One-click (RFC 8058): a POST of List-Unsubscribe=One-Click to the link itself; nothing granted: nothing to withdraw.
    const unsubscribe = /Unsubscribe at any time: (\S+)/.exec(mail.text)![1]!;
    const oneClick = await post(unsubscribe, { 'List-Unsubscribe': 'One-Click' });
    expect(oneClick.status).toBe(200);
    expect(await consentEvents(contact.id)).toEqual([]);
  });
});

describe('the record, read-only on every surface', () => {
  it('is on the contact in the application API and in /v1 (contacts:read); no API key writes it', async () => {
    const form = await consentForm(false, [NEWS]);
    const address = email();
    await submitJson(t, form.id, { email: address, _consent_email_marketing: true });
    const contact = await contactOf(address);
    const internal = await rest(t, 'GET', `/contacts/${contact.id}/consents`, org.ownerKey);
    expect(internal.status).toBe(200);
    expect(internal.body.purposes).toEqual([
      {
        purpose: 'email_marketing',
        granted: true,
        since: expect.any(String),
        method: 'single_opt_in',
        text: NEWS.text,
        version: NEWS.version,
      },
    ]);
    expect(internal.body.entries[0]).toMatchObject({ purpose: 'email_marketing', status: 'granted', formId: form.id, expired: false });
    const v1 = await call(t, 'GET', `/contacts/${contact.id}/consents`, { key: org.publicKey });
    expect(v1.status).toBe(200);
    expect(v1.body).toEqual(internal.body);
    expect((await call(t, 'GET', '/contacts/00000000-0000-4000-8000-000000000000/consents', { key: org.publicKey })).status).toBe(404);

    // No write path: /v1 has no consent operation and its upsert takes no consent field.
    for (const method of ['POST', 'PUT', 'PATCH'] as const)
      expect(
        (await call(t, method, `/contacts/${contact.id}/consents`, { key: org.publicKey, body: { purpose: 'sms' } })).status,
      ).toBeGreaterThanOrEqual(404);
    // Spec rule 8: whatever the upsert says about consent (these fields are not its), consent stays as recorded.
    await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: address, emailConsent: false, smsConsent: true } });
    expect(await entries(contact.id)).toHaveLength(1);
    expect((await contactOf(address)).email_consent).toBe(true);
  });
});
