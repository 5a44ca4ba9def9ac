/**
 * The single upsert merges in SQL (`leadwire_contacts_write`, Migration20261128150000) what contacts/shared/apply.ts
 * merges in TypeScript for every other write (batches, the application, form intake): upsert rule 4 (fields sent
 * overwrite, null clears, tags only added and compared ignoring case, custom merged key by key with null removing a
 * key, an existing email kept) and the lead score (scoring/score.ts: the weights, `trim()`'s whitespace, the source
 * bonus, a booking, the adjustment, the override). Two writings of one rule can drift, so this holds them to the same
 * answers: random stored contacts and random requests (a seeded generator, so a failure repeats), each sent through
 * POST /v1/contacts/upsert and compared, row and events, with what apply.ts makes of the same contact and request.
 */
import { randomUUID } from 'node:crypto';
import { applyRow, newContact, scoreOf } from '#core/contacts/shared/apply.ts';
import type { ContactRow } from '#core/contacts/shared/row.ts';
import { toEventContact } from '#core/contacts/shared/row.ts';
import { ContactUpsertInput } from '#core/contacts/v1/schemas.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
const companies = new Map<string, string>();
beforeAll(async () => {
  t = await initTestApp();
  org = await t.newOrg({ plan: 'max' });
  for (const domain of ['merge-a.example', 'merge-b.example']) {
    const r = await call(t, 'POST', '/companies/upsert', { key: org.publicKey, body: { domain } });
    companies.set(domain, r.body.id);
  }
});
afterAll(async () => t?.close());

/** mulberry32: a small seeded generator, so that a failing case is the same case on the next run. */
function generator(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const chance = (p: number) => next() < p;
  return { next, pick, chance };
}

/** Text as stored values come: empty, blank by trim()'s reckoning (ideographic space, NBSP, tabs), padded, plain. */
const STORED_TEXT = [null, '', '  ', '\u3000', '\u00a0\t', 'Ada', ' Lovelace ', 'x'] as const;
const SENT_TEXT = [undefined, null, 'Grace', 'Hopper', '+44 20 7946 0018', 'CTO', '  Padded  '] as const;
const SOURCES = ['api', 'form', ' Referral ', 'BOOKING', 'manual', 'webinar', 'booking\t'] as const;
const TAGS = ['vip', 'VIP', 'news', 'Beta', 'beta', 'new-tag', 'X'] as const;

type Case = { stored: ContactRow | null; body: Record<string, unknown>; booking: boolean };

function makeCase(r: ReturnType<typeof generator>, n: number): Case {
  const email = `merge-${n}-${randomUUID().slice(0, 6)}@merge.example`;
  const body: Record<string, unknown> = { email };
  for (const field of ['firstName', 'lastName', 'phone', 'title'] as const) {
    const v = r.pick(SENT_TEXT);
    if (v !== undefined) body[field] = v;
  }
  if (r.chance(0.6)) body.tags = Array.from({ length: Math.floor(r.next() * 4) }, () => r.pick(TAGS));
  if (r.chance(0.5)) body.custom = { plan: r.pick(['trial', 'pro', null]), seats: r.pick([1, 5, null]), nested: { a: r.pick([1, null]) } };
  if (r.chance(0.3)) body.companyDomain = r.pick(['merge-a.example', 'https://www.Merge-B.example/about', null]);
  if (r.chance(0.2)) body.source = r.pick(['webinar', 'referral']);
  if (r.chance(0.25)) {
    // Not created: there is nothing to merge into.
    return { stored: null, body, booking: false };
  }
  const stored: ContactRow = {
    id: randomUUID(),
    organization_id: org.orgId,
    email,
    first_name: r.pick(STORED_TEXT),
    last_name: r.pick(STORED_TEXT),
    phone: r.pick(STORED_TEXT),
    job_title: r.pick(STORED_TEXT),
    website: r.pick(STORED_TEXT),
    linkedin: r.pick(STORED_TEXT),
    tags: [...new Set(Array.from({ length: Math.floor(r.next() * 3) }, () => r.pick(TAGS)).map((x) => x.toLowerCase()))],
    custom: r.chance(0.5) ? { plan: 'old', keep: true } : {},
    source: r.pick(SOURCES),
    lead_score: 0,
    score_adjustment: Math.floor(r.next() * 41) - 20,
    score_override: r.chance(0.2) ? Math.floor(r.next() * 120) : null,
    stage: 'lead',
    company_id: r.chance(0.3) ? companies.get('merge-b.example')! : null,
    email_consent: false,
    sms_consent: false,
    deleted_at: null,
    created_at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, Math.floor(r.next() * 1000))),
    updated_at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
  };
  const booking = r.chance(0.2);
  stored.has_booking = booking;
  stored.lead_score = scoreOf(stored);
  return { stored, body, booking };
}

async function store(c: Case): Promise<void> {
  const s = c.stored!;
  await t.sql(
    `insert into contacts (id, organization_id, email, first_name, last_name, phone, job_title, website, linkedin, tags, custom, source,
       lead_score, score_adjustment, score_override, stage, company_id, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      s.id,
      s.organization_id,
      s.email,
      s.first_name,
      s.last_name,
      s.phone,
      s.job_title,
      s.website,
      s.linkedin,
      s.tags,
      JSON.stringify(s.custom),
      s.source,
      s.lead_score,
      s.score_adjustment,
      s.score_override,
      s.stage,
      s.company_id,
      s.created_at,
      s.updated_at,
    ],
  );
  if (c.booking) {
    await t.sql(`insert into bookings (organization_id, contact_id, starts_at, ends_at, status) values (?, ?, ?, ?, 'confirmed')`, [
      org.orgId,
      s.id,
      s.created_at,
      s.updated_at,
    ]);
  }
}

/** What apply.ts makes of the case, and the events the upsert emits for it (upsert.ts's order). */
function expected(c: Case, now: Date) {
  const input = ContactUpsertInput.parse(c.body);
  const domain =
    typeof c.body.companyDomain === 'string' ? (c.body.companyDomain.includes('merge-a') ? 'merge-a.example' : 'merge-b.example') : null;
  const companyId = input.companyDomain === undefined ? undefined : domain === null ? null : companies.get(domain)!;
  const row = { input, companyId, source: input.source ?? 'api' };
  if (!c.stored) {
    const fresh = newContact(org.orgId, 'new', row, now);
    return { after: fresh, events: [{ event: 'contact.created', data: { contact: toEventContact(fresh) } }] };
  }
  const after = applyRow(c.stored, row, now);
  const contact = toEventContact(after);
  const had = new Set(c.stored.tags.map((x) => x.toLowerCase()));
  const events: { event: string; data: Record<string, unknown> }[] = [{ event: 'contact.updated', data: { contact } }];
  for (const tag of after.tags.filter((x) => !had.has(x.toLowerCase())))
    events.push({ event: 'contact.tag_added', data: { contact, tag } });
  if (after.lead_score !== c.stored.lead_score) {
    events.push({ event: 'contact.score_changed', data: { contact, previousScore: c.stored.lead_score } });
  }
  return { after, events };
}

const FIELDS = [
  'email',
  'first_name',
  'last_name',
  'phone',
  'job_title',
  'company_id',
  'tags',
  'custom',
  'score_override',
  'lead_score',
  'source',
] as const;

describe('the single upsert merges in SQL as apply.ts merges in TypeScript', () => {
  it('on 120 random stored contacts and requests: the same row and the same events', async () => {
    const r = generator(27);
    for (let n = 0; n < 120; n++) {
      const c = makeCase(r, n);
      if (c.stored) await store(c);
      const res = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: c.body });
      const label = JSON.stringify({ n, stored: c.stored, booking: c.booking, body: c.body });
      expect(res.status, `${label} ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.created, label).toBe(c.stored === null);
      const written = await t.sql<{ event: string; payload: { data: Record<string, unknown>; timestamp: string; source: string } }>(
        `select event, payload from outbox_events where request_id = ? order by seq`,
        [res.headers.get('x-request-id')],
      );
      // The instant the server wrote at (its clock reading): every event's timestamp, the contact's updated_at.
      const now = new Date(written[0]?.payload.timestamp ?? 0);
      const { after, events } = expected(c, now);
      const [row] = await t.sql<Record<string, unknown>>(
        `select email, first_name, last_name, phone, job_title, company_id, tags, custom, score_override, lead_score, source,
           created_at, updated_at from contacts where id = ?`,
        [res.body.id],
      );
      const want = Object.fromEntries(FIELDS.map((f) => [f, after[f]]));
      expect(Object.fromEntries(FIELDS.map((f) => [f, row![f]])), label).toEqual(want);
      expect(new Date(row!.updated_at as string).getTime(), label).toBe(now.getTime());
      const contactOf = (data: Record<string, unknown>) => ({ ...(data.contact as Record<string, unknown>), id: res.body.id });
      expect(
        written.map((w) => ({ event: w.event, data: { ...w.payload.data, contact: contactOf(w.payload.data) } })),
        label,
      ).toEqual(events.map((e) => ({ event: e.event, data: { ...e.data, contact: contactOf(e.data) } })));
      for (const w of written) expect([w.payload.timestamp, w.payload.source], label).toEqual([now.toISOString(), 'api']);
    }
  });
});
