import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let key: string;
let orgId: string;
beforeAll(async () => {
  t = await initTestApp();
  ({ publicKey: key, orgId } = await t.newOrg());
});
afterAll(async () => t?.close());

const upsert = (body: unknown, headers?: Record<string, string>) =>
  call(t, 'POST', '/contacts/upsert', { key, body, ...(headers ? { headers } : {}) });
const contactRow = async (id: string) => (await t.sql<any>('select * from contacts where id = ?', [id]))[0];
const company = (domain: string) => call(t, 'POST', '/companies/upsert', { key, body: { domain } });
let n = 0;
const uniqueEmail = () => `person${++n}-${Date.now()}@example.com`;

describe('rule 1: identity', () => {
  it.each([
    [{}],
    [{ firstName: 'A', lastName: 'B' }],
    [{ companyDomain: 'acme-id.com', firstName: 'A' }],
    [{ companyDomain: 'acme-id.com', lastName: 'B' }],
    [{ phone: '+1 555', tags: ['x'] }],
    [{ email: null, firstName: 'A', lastName: 'B' }],
  ])('refuses %j with 400 missing_identity and saves nothing', async (body) => {
    const before = await t.sql<any>('select count(*)::int as n from contacts where organization_id = ?', [orgId]);
    const r = await upsert(body);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ code: 'missing_identity', error: expect.stringContaining('email') });
    const after = await t.sql<any>('select count(*)::int as n from contacts where organization_id = ?', [orgId]);
    expect(after[0].n).toBe(before[0].n);
  });

  it('accepts companyDomain + firstName + lastName without an email', async () => {
    await company('identity-ok.com');
    const r = await upsert({ companyDomain: 'identity-ok.com', firstName: 'Grace', lastName: 'Hopper' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: true, matchedBy: null });
  });
});

describe('rule 2: matching order', () => {
  it('matches by email lowercased and trimmed', async () => {
    const email = uniqueEmail();
    const a = await upsert({ email: `  ${email.toUpperCase()}  ` });
    expect(a.body.created).toBe(true);
    expect((await contactRow(a.body.id)).email).toBe(email);
    const b = await upsert({ email });
    expect(b.body).toEqual({ id: a.body.id, created: false, matchedBy: 'email' });
  });

  it('matches by first and last name at the same company domain when no email is sent', async () => {
    await company('https://www.name-match.com/');
    const a = await upsert({ companyDomain: 'name-match.com', firstName: 'Alan', lastName: 'Turing' });
    const b = await upsert({ companyDomain: 'WWW.Name-Match.com', firstName: 'alan', lastName: 'TURING', phone: '1' });
    expect(b.body).toEqual({ id: a.body.id, created: false, matchedBy: 'domain_name' });
  });

  it('does not match the same name at another company', async () => {
    await company('other-a.com');
    await company('other-b.com');
    const a = await upsert({ companyDomain: 'other-a.com', firstName: 'Ada', lastName: 'King' });
    const b = await upsert({ companyDomain: 'other-b.com', firstName: 'Ada', lastName: 'King' });
    expect(b.body.created).toBe(true);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it('with an email, an unmatched email creates a new contact even if the name matches', async () => {
    await company('email-first.com');
    const a = await upsert({ companyDomain: 'email-first.com', firstName: 'Linus', lastName: 'T' });
    const b = await upsert({ email: uniqueEmail(), companyDomain: 'email-first.com', firstName: 'Linus', lastName: 'T' });
    expect(b.body.created).toBe(true);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it('ignores contacts in trash when matching', async () => {
    const email = uniqueEmail();
    const a = await upsert({ email });
    await t.sql('update contacts set deleted_at = now() where id = ?', [a.body.id]);
    const b = await upsert({ email });
    expect(b.body.created).toBe(true);
    expect(b.body.id).not.toBe(a.body.id);
  });
});

describe('rule 3: the oldest of several matches wins', () => {
  it('picks the oldest contact with the name at the domain', async () => {
    const c = await company('oldest-wins.com');
    const ids: string[] = [];
    for (const age of [3, 10, 1]) {
      const [row] = await t.sql<any>(
        `insert into contacts (organization_id, first_name, last_name, company_id, created_at)
         values (?, 'Dup', 'Licate', ?, now() - make_interval(days => ?)) returning id`,
        [orgId, c.body.id, age],
      );
      ids.push(row.id);
    }
    const r = await upsert({ companyDomain: 'oldest-wins.com', firstName: 'Dup', lastName: 'Licate', phone: '42' });
    expect(r.body).toEqual({ id: ids[1], created: false, matchedBy: 'domain_name' });
    expect((await contactRow(ids[1]!)).phone).toBe('42');
    expect((await contactRow(ids[0]!)).phone).toBeNull();
  });
});

describe('rule 4: overwrite, add tags, keep email', () => {
  it('overwrites sent fields, leaves omitted ones, clears nulls, adds tags, merges custom', async () => {
    const email = uniqueEmail();
    const a = await upsert({ email, firstName: 'A', lastName: 'L', phone: '1', title: 'CTO', tags: ['Vip', 'b'], custom: { x: 1, y: 2 } });
    await upsert({ email, firstName: 'B', phone: null, tags: ['vip', 'c'], custom: { y: null, z: 3 } });
    const row = await contactRow(a.body.id);
    expect(row).toMatchObject({
      first_name: 'B',
      last_name: 'L',
      phone: null,
      job_title: 'CTO',
      tags: ['Vip', 'b', 'c'],
      custom: { x: 1, z: 3 },
    });
    await upsert({ email, tags: [] });
    expect((await contactRow(a.body.id)).tags).toEqual(['Vip', 'b', 'c']);
  });

  it('never replaces an existing email (a name match without email keeps it)', async () => {
    await company('keep-email.com');
    const email = uniqueEmail();
    const a = await upsert({ email, companyDomain: 'keep-email.com', firstName: 'Keep', lastName: 'Mail' });
    const b = await upsert({ companyDomain: 'keep-email.com', firstName: 'Keep', lastName: 'Mail', phone: '9' });
    expect(b.body).toMatchObject({ id: a.body.id, matchedBy: 'domain_name' });
    expect((await contactRow(a.body.id)).email).toBe(email);
  });
});

describe('rule 5 and 6: company links', () => {
  it('links to an existing company by normalised domain and never creates one', async () => {
    const c = await company('linked.com');
    const a = await upsert({ email: uniqueEmail(), companyDomain: 'https://WWW.linked.com/about' });
    expect((await contactRow(a.body.id)).company_id).toBe(c.body.id);
    const before = await t.sql<any>('select count(*)::int as n from companies where organization_id = ?', [orgId]);
    const r = await upsert({ email: uniqueEmail(), companyDomain: 'not-there.com' });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 'company_not_found', domain: 'not-there.com' });
    const after = await t.sql<any>('select count(*)::int as n from companies where organization_id = ?', [orgId]);
    expect(after[0].n).toBe(before[0].n);
  });

  it('refuses an unusable domain with a clear 400', async () => {
    const r = await upsert({ email: uniqueEmail(), companyDomain: 'localhost' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.issues[0].path).toBe('companyDomain');
  });
});

describe('rule 7: source', () => {
  it('defaults to api, takes the body, else X-Source, and applies to new contacts only', async () => {
    const e1 = uniqueEmail();
    const e2 = uniqueEmail();
    const e3 = uniqueEmail();
    const a = await upsert({ email: e1 });
    const b = await upsert({ email: e2 }, { 'x-source': 'partner.crm-1' });
    const c = await upsert({ email: e3, source: 'body_wins' }, { 'x-source': 'header' });
    expect((await contactRow(a.body.id)).source).toBe('api');
    expect((await contactRow(b.body.id)).source).toBe('partner.crm-1');
    expect((await contactRow(c.body.id)).source).toBe('body_wins');
    await upsert({ email: e1, source: 'later' });
    expect((await contactRow(a.body.id)).source).toBe('api');
  });

  it.each(['has space', 'x'.repeat(41), 'semi;colon', '', 'ünïcode'])('refuses source %j in body and header', async (bad) => {
    const r1 = await upsert({ email: uniqueEmail(), source: bad });
    expect(r1.status).toBe(400);
    expect(r1.body.code).toBe('validation_failed');
    if (bad !== '' && /^[\x20-\x7e]*$/.test(bad)) {
      const r2 = await upsert({ email: uniqueEmail() }, { 'x-source': bad });
      expect(r2.status).toBe(400);
      expect(r2.body.issues[0].path).toBe('X-Source');
    }
  });

  it('accepts exactly 40 characters', async () => {
    const r = await upsert({ email: uniqueEmail(), source: 'a'.repeat(40) });
    expect(r.status).toBe(200);
  });
});

describe('rule 8: consent', () => {
  it('never sets email or SMS marketing consent, even when asked', async () => {
    const r = await upsert({ email: uniqueEmail(), emailConsent: true, smsConsent: true, email_consent: true });
    expect(r.status).toBe(200);
    const row = await contactRow(r.body.id);
    expect(row.email_consent).toBe(false);
    expect(row.sms_consent).toBe(false);
  });
});

describe('rule 9: events', () => {
  it('writes contact.created then contact.updated with source api to the outbox', async () => {
    const email = uniqueEmail();
    const a = await upsert({ email, firstName: 'Evie' });
    await upsert({ email, lastName: 'Event' });
    const events = await t.sql<any>(
      `select event, payload from outbox_events where payload->'data'->'contact'->>'id' = ? order by created_at, event`,
      [a.body.id],
    );
    expect(events.map((e) => e.event)).toEqual(['contact.created', 'contact.updated']);
    for (const e of events) {
      expect(e.payload).toMatchObject({ event: e.event, source: 'api', data: { contact: { id: a.body.id, email, firstName: 'Evie' } } });
      expect(e.payload.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it('emits nothing when the write is refused', async () => {
    const before = await t.sql<any>('select count(*)::int as n from outbox_events');
    await upsert({ email: uniqueEmail(), companyDomain: 'missing-company.com' });
    await upsert({ firstName: 'No', lastName: 'Identity' });
    const after = await t.sql<any>('select count(*)::int as n from outbox_events');
    expect(after[0].n).toBe(before[0].n);
  });
});

describe('lead score', () => {
  it('is computed from the data and recomputed when it changes', async () => {
    await company('score.com');
    const email = uniqueEmail();
    const a = await upsert({ email });
    expect((await contactRow(a.body.id)).lead_score).toBe(15);
    await upsert({ email, phone: '1', title: 'CEO', companyDomain: 'score.com' });
    expect((await contactRow(a.body.id)).lead_score).toBe(50);
    await upsert({ email, phone: null });
    expect((await contactRow(a.body.id)).lead_score).toBe(40);
    const f = await upsert({ email: uniqueEmail(), source: 'form' });
    expect((await contactRow(f.body.id)).lead_score).toBe(25);
  });

  it('keeps a manual override', async () => {
    const email = uniqueEmail();
    const a = await upsert({ email });
    await t.sql('update contacts set score_override = 99 where id = ?', [a.body.id]);
    await upsert({ email, phone: '1' });
    expect((await contactRow(a.body.id)).lead_score).toBe(99);
  });
});

describe('search', () => {
  it('finds case-insensitively and returns exactly the documented fields', async () => {
    const email = uniqueEmail();
    const a = await upsert({ email, firstName: 'S', lastName: 'R', phone: '5', title: 'Eng', tags: ['t'] });
    const r = await call(t, 'GET', `/contacts/search?email=${encodeURIComponent(` ${email.toUpperCase()} `)}`, { key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: a.body.id,
      email,
      firstName: 'S',
      lastName: 'R',
      phone: '5',
      jobTitle: 'Eng',
      tags: ['t'],
      leadScore: 35,
      stage: 'lead',
    });
  });

  it('404 not_found when nothing matches, 400 on a bad email', async () => {
    const r = await call(t, 'GET', '/contacts/search?email=nobody@nowhere.example', { key });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ code: 'not_found', error: expect.any(String) });
    const bad = await call(t, 'GET', '/contacts/search?email=not-an-email', { key });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });
});

describe('concurrency', () => {
  it('fifty simultaneous upserts of one new email create exactly one contact', async () => {
    const email = uniqueEmail();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => upsert({ email, tags: [`t${i}`] })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.filter((r) => r.body.created).length).toBe(1);
    const rows = await t.sql<any>('select tags from contacts where organization_id = ? and email = ?', [orgId, email]);
    expect(rows).toHaveLength(1);
    expect(rows[0].tags).toHaveLength(50);
    const events = await t.sql<any>(`select event from outbox_events where payload->'data'->'contact'->>'email' = ?`, [email]);
    expect(events.filter((e) => e.event === 'contact.created')).toHaveLength(1);
    expect(events.filter((e) => e.event === 'contact.created' || e.event === 'contact.updated')).toHaveLength(50);
    // Every upsert but the creating one brought a tag the contact did not carry.
    expect(events.filter((e) => e.event === 'contact.tag_added')).toHaveLength(49);
    expect(events).toHaveLength(99);
  });

  it('simultaneous name-at-domain upserts create exactly one contact', async () => {
    await company('race-names.com');
    const results = await Promise.all(
      Array.from({ length: 20 }, () => upsert({ companyDomain: 'race-names.com', firstName: 'Race', lastName: 'Cond' })),
    );
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
  });
});
