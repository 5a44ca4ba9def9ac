import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { contactCount, eventsOf, newTestOrg, refusal, rest, type TestOrg, typedClient } from './contacts-support.ts';

let t: TestApp;
let a: TestOrg;
let b: TestOrg;

beforeAll(async () => {
  t = await initTestApp();
  // Max plan: 300 Internal-key calls a minute, room for every call this file makes.
  [a, b] = await Promise.all([newTestOrg(t, 'max'), newTestOrg(t, 'max')]);
});
afterAll(async () => t?.close());

describe('creating contacts', () => {
  it('creates a contact through a session, counts it, and emits contact.created with source app', async () => {
    const before = await contactCount(t, a.orgId);
    const c = await a.session.contacts.create.mutate({
      email: ' Grace@Example.com ',
      firstName: 'Grace',
      lastName: 'Hopper',
      tags: ['navy'],
    });
    expect(c).toMatchObject({
      email: 'grace@example.com',
      firstName: 'Grace',
      lastName: 'Hopper',
      tags: ['navy'],
      source: 'manual',
      stage: 'lead',
      leadScore: 15,
      scoreOverride: null,
      company: null,
    });
    expect(await contactCount(t, a.orgId)).toBe(before + 1);
    const events = await eventsOf(t, a.orgId, c.id);
    expect(events).toEqual([
      { event: 'contact.created', source: 'app', data: { contact: expect.objectContaining({ id: c.id, email: 'grace@example.com' }) } },
    ]);
  });

  it('refuses an email a live contact already has, in any case, with the spec message and 409', async () => {
    const first = await a.owner.contacts.create.mutate({ email: 'dup@example.com' });
    const r = await refusal(a.owner.contacts.create.mutate({ email: 'DUP@example.com', firstName: 'Again' }));
    expect(r).toMatchObject({ status: 409, code: 'email_exists', error: 'Email already exists in your organization' });
    expect(r.body.existingContactId).toBe(first.id);
    // Another organization may hold the same email.
    await expect(b.owner.contacts.create.mutate({ email: 'dup@example.com' })).resolves.toMatchObject({ email: 'dup@example.com' });
  });

  it('needs an email or a name, and a company of the same organization', async () => {
    expect(await refusal(a.owner.contacts.create.mutate({ phone: '+1 555 0100' }))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    const [company] = await t.sql<{ id: string }>(
      `insert into companies (organization_id, domain, name) values (?, 'b-corp.example', 'B') returning id`,
      [b.orgId],
    );
    const noCompany = await refusal(a.owner.contacts.create.mutate({ firstName: 'X', companyId: company!.id }));
    expect(noCompany).toMatchObject({ status: 422, code: 'company_not_found' });
    // The id looked up, as the CompanyNotFoundError shape documents (the /v1 flavour names the domain).
    expect(noCompany.body.companyId).toBe(company!.id);
  });

  it('refuses past the plan contact cap with `Contact limit reached`, counting only admitted contacts', async () => {
    const org = await newTestOrg(t);
    await t.sql('update contact_counters set contact_count = 9999 where organization_id = ?', [org.orgId]);
    await org.owner.contacts.create.mutate({ firstName: 'Last one' });
    expect(await refusal(org.owner.contacts.create.mutate({ firstName: 'One too many' }))).toMatchObject({
      status: 403,
      code: 'contact_limit_reached',
      error: 'Contact limit reached',
    });
    expect(await contactCount(t, org.orgId)).toBe(10_000);
  });

  it('answers over REST with 201, and refuses a Public API key as the wrong surface', async () => {
    const r = await rest(t, 'POST', '/contacts', a.ownerKey, { firstName: 'Rest', lastName: 'Ful' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ firstName: 'Rest', lastName: 'Ful', source: 'manual' });
    expect(await rest(t, 'GET', '/contacts', a.publicKey)).toMatchObject({ status: 403, body: { code: 'wrong_api_surface' } });
  });
});

describe('changing contacts', () => {
  it('updates fields: omitted stay, null clears, the score follows, and the events say what changed', async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'upd@example.com', firstName: 'Up', jobTitle: 'CTO' });
    expect(c.leadScore).toBe(25);
    const u = await a.member.contacts.update.mutate({ id: c.id, jobTitle: null, phone: '+1 555 0101', website: 'https://up.example' });
    expect(u).toMatchObject({
      email: 'upd@example.com',
      firstName: 'Up',
      jobTitle: null,
      phone: '+1 555 0101',
      website: 'https://up.example',
      leadScore: 30,
    });
    const events = (await eventsOf(t, a.orgId, c.id)).slice(1);
    expect(events.map((e) => e.event)).toEqual(['contact.updated', 'contact.score_changed']);
    expect(events[1]!.data).toMatchObject({ previousScore: 25, contact: { leadScore: 30 } });
    expect(events.every((e) => e.source === 'app')).toBe(true);
    // The same change again changes nothing: no write, no event.
    await a.member.contacts.update.mutate({ id: c.id, phone: '+1 555 0101' });
    expect(await eventsOf(t, a.orgId, c.id)).toHaveLength(3);
  });

  it('keeps the booking bonus when a write rescores the contact', async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'booked@example.com' });
    await t.sql(`insert into bookings (organization_id, contact_id, starts_at, ends_at) values (?, ?, now(), now() + interval '1 hour')`, [
      a.orgId,
      c.id,
    ]);
    // email +15, phone +10, booking +20
    expect((await a.owner.contacts.update.mutate({ id: c.id, phone: '+1 555 0199' })).leadScore).toBe(45);
    expect((await a.owner.contacts.setScoreOverride.mutate({ id: c.id, score: null })).leadScore).toBe(45);
  });

  it('lets the email change but keeps it unique among live contacts', async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'mover@example.com' });
    await a.owner.contacts.create.mutate({ email: 'taken@example.com' });
    expect(await refusal(a.owner.contacts.update.mutate({ id: c.id, email: 'Taken@example.com' }))).toMatchObject({
      status: 409,
      error: 'Email already exists in your organization',
    });
    const gone = await a.owner.contacts.create.mutate({ email: 'trashed@example.com' });
    await a.owner.contacts.delete.mutate({ id: gone.id });
    await expect(a.owner.contacts.update.mutate({ id: c.id, email: 'trashed@example.com' })).resolves.toMatchObject({
      email: 'trashed@example.com',
    });
    const r = await rest(t, 'POST', `/contacts/${c.id}/update`, a.ownerKey, { email: 'moved@example.com' });
    expect(r).toMatchObject({ status: 200, body: { id: c.id, email: 'moved@example.com' } });
  });

  it('adds tags with one contact.tag_added per new tag, and removes tags case-insensitively', async () => {
    const c = await a.owner.contacts.create.mutate({ firstName: 'Tagged', tags: ['VIP'] });
    const added = await a.owner.contacts.addTags.mutate({ id: c.id, tags: ['vip', 'webinar', 'beta'] });
    expect(added.tags).toEqual(['VIP', 'webinar', 'beta']);
    const tagEvents = (await eventsOf(t, a.orgId, c.id)).filter((e) => e.event === 'contact.tag_added');
    expect(tagEvents.map((e) => e.data.tag).sort()).toEqual(['beta', 'webinar']);
    const removed = await rest(t, 'POST', `/contacts/${c.id}/tags/remove`, a.ownerKey, { tags: ['Webinar', 'vip'] });
    expect(removed).toMatchObject({ status: 200, body: { tags: ['beta'] } });
    expect((await eventsOf(t, a.orgId, c.id)).at(-1)?.event).toBe('contact.updated');
  });

  it('moves the stage within the documented list and emits contact.stage_changed with the previous stage', async () => {
    const c = await a.owner.contacts.create.mutate({ firstName: 'Staged' });
    expect((await a.member.contacts.setStage.mutate({ id: c.id, stage: 'customer' })).stage).toBe('customer');
    const changed = (await eventsOf(t, a.orgId, c.id)).filter((e) => e.event === 'contact.stage_changed');
    expect(changed).toEqual([{ event: 'contact.stage_changed', source: 'app', data: expect.objectContaining({ previousStage: 'lead' }) }]);
    expect(await refusal(a.owner.contacts.setStage.mutate({ id: c.id, stage: 'nonsense' as 'lead' }))).toMatchObject({ status: 400 });
  });

  it('overrides the score by hand and clears the override back to the computed score', async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'score@example.com' });
    expect(await a.owner.contacts.setScoreOverride.mutate({ id: c.id, score: 90 })).toMatchObject({ leadScore: 90, scoreOverride: 90 });
    expect(await a.owner.contacts.setScoreOverride.mutate({ id: c.id, score: null })).toMatchObject({ leadScore: 15, scoreOverride: null });
    const scores = (await eventsOf(t, a.orgId, c.id)).filter((e) => e.event === 'contact.score_changed');
    expect(scores.map((e) => [e.data.previousScore, e.data.contact.leadScore])).toEqual([
      [15, 90],
      [90, 15],
    ]);
    expect(await rest(t, 'POST', `/contacts/${c.id}/score`, a.ownerKey, { score: 101 })).toMatchObject({
      status: 400,
      body: { code: 'validation_failed' },
    });
  });

  it('records consent only from real booleans and scores only from real numbers, over REST too', async () => {
    const c = await a.owner.contacts.create.mutate({ phone: '+1 555 0102', firstName: 'Consent' });
    expect(c.smsConsent).toBe(false);
    for (const body of [{ smsConsent: 'false' }, { smsConsent: 1 }, { emailConsent: 'yes' }]) {
      expect(await rest(t, 'POST', `/contacts/${c.id}/update`, a.ownerKey, body), JSON.stringify(body)).toMatchObject({ status: 400 });
    }
    for (const score of ['50', false, '']) {
      expect(await rest(t, 'POST', `/contacts/${c.id}/score`, a.ownerKey, { score }), JSON.stringify(score)).toMatchObject({ status: 400 });
    }
    expect(await rest(t, 'POST', `/contacts/${c.id}/update`, a.ownerKey, { smsConsent: true })).toMatchObject({
      status: 200,
      body: { smsConsent: true },
    });
    expect(await rest(t, 'POST', `/contacts/${c.id}/score`, a.ownerKey, { score: null })).toMatchObject({
      status: 200,
      body: { scoreOverride: null },
    });
    expect(await a.owner.contacts.get.query({ id: c.id })).toMatchObject({
      contact: { smsConsent: true, emailConsent: false, scoreOverride: null },
    });
  });

  it('keeps organizations apart: a foreign id behaves like an unknown one', async () => {
    const c = await a.owner.contacts.create.mutate({ firstName: 'Private' });
    for (const call of [
      () => b.owner.contacts.get.query({ id: c.id }),
      () => b.owner.contacts.update.mutate({ id: c.id, firstName: 'Hijacked' }),
      () => b.owner.contacts.addTags.mutate({ id: c.id, tags: ['x'] }),
      () => b.owner.contacts.setStage.mutate({ id: c.id, stage: 'customer' }),
      () => b.owner.contacts.setScoreOverride.mutate({ id: c.id, score: 1 }),
      () => b.owner.contacts.delete.mutate({ id: c.id }),
    ]) {
      expect(await refusal(call())).toMatchObject({ status: 404, code: 'not_found' });
    }
    expect((await a.owner.contacts.get.query({ id: c.id })).contact).toMatchObject({ firstName: 'Private', tags: [], stage: 'lead' });
    const listed = await b.owner.contacts.list.query({ limit: 100 });
    expect(listed.items.map((x) => x.id)).not.toContain(c.id);
  });
});

describe('timeline', () => {
  it('shows notes, events, deals, tasks and messages about the contact, newest first, bounded and paged', async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'timeline@example.com', firstName: 'Tim' });
    const other = await a.owner.contacts.create.mutate({ email: 'other-timeline@example.com' });
    await a.owner.contacts.setStage.mutate({ id: c.id, stage: 'qualified' });
    const start = Date.now();
    const at = (minutes: number) => new Date(start + minutes * 60_000).toISOString();
    await t.sql(
      `insert into notes (organization_id, contact_id, body, created_at) values (?, ?, 'first call', ?), (?, ?, 'not this one', ?)`,
      [a.orgId, c.id, at(1), a.orgId, other.id, at(1)],
    );
    const [stage] = await t.sql<{ id: string; pipeline_id: string }>(
      `select s.id, s.pipeline_id from pipeline_stages s join pipelines p on p.id = s.pipeline_id where p.organization_id = ? order by s.position limit 1`,
      [a.orgId],
    );
    await t.sql(
      `insert into deals (organization_id, contact_id, pipeline_id, stage_id, title, value_cents, created_at) values (?, ?, ?, ?, 'Big deal', 500000, ?)`,
      [a.orgId, c.id, stage!.pipeline_id, stage!.id, at(2)],
    );
    await t.sql(`insert into tasks (organization_id, contact_id, title, due_at, created_at) values (?, ?, 'Call back', ?, ?)`, [
      a.orgId,
      c.id,
      at(60),
      at(3),
    ]);
    const [conv] = await t.sql<{ id: string }>(`insert into conversations (organization_id, contact_id) values (?, ?) returning id`, [
      a.orgId,
      c.id,
    ]);
    await t.sql(
      `insert into messages (organization_id, conversation_id, contact_id, direction, from_address, to_address, body, status, created_at)
       values (?, ?, ?, 'inbound', '+1555', '+1666', 'hello', 'received', ?)`,
      [a.orgId, conv!.id, c.id, at(4)],
    );

    const { contact, timeline } = await a.member.contacts.get.query({ id: c.id });
    expect(contact.id).toBe(c.id);
    expect(timeline.items.map((i) => i.kind)).toEqual(['message', 'task', 'deal', 'note', 'event', 'event', 'event']);
    expect(timeline.items[0]).toMatchObject({ kind: 'message', direction: 'inbound', body: 'hello', status: 'received' });
    expect(timeline.items[1]).toMatchObject({ kind: 'task', title: 'Call back', dueAt: at(60), completedAt: null });
    expect(timeline.items[2]).toMatchObject({ kind: 'deal', title: 'Big deal', valueCents: 500000, status: 'open', stage: 'New' });
    expect(timeline.items[3]).toMatchObject({ kind: 'note', body: 'first call' });
    // The stage change emitted two events in one transaction, at one instant: their order is the id tiebreak's.
    const events = timeline.items.slice(4).map((i) => (i.kind === 'event' ? `${i.event}/${i.source}` : i.kind));
    expect(new Set(events.slice(0, 2))).toEqual(new Set(['contact.updated/app', 'contact.stage_changed/app']));
    expect(events[2]).toBe('contact.created/app');
    expect(timeline.nextCursor).toBeNull();

    // Bounded: pages of 2 walk the same items in the same order, without repeats.
    const seen: string[] = [];
    const page = await a.owner.contacts.get.query({ id: c.id, timelineLimit: 2 });
    let next = page.timeline.nextCursor;
    seen.push(...page.timeline.items.map((i) => i.id));
    while (next) {
      const more = await a.owner.contacts.timeline.query({ id: c.id, limit: 2, cursor: next });
      seen.push(...more.items.map((i) => i.id));
      next = more.nextCursor;
    }
    expect(seen).toEqual(timeline.items.map((i) => i.id));
    const r = await rest(t, 'GET', `/contacts/${c.id}?timelineLimit=101`, a.ownerKey);
    expect(r).toMatchObject({ status: 400, body: { code: 'validation_failed' } });
    expect(await refusal(b.owner.contacts.timeline.query({ id: c.id }))).toMatchObject({ status: 404 });
  });
});

describe('the contract', () => {
  it('describes every contact operation in the application OpenAPI document', async () => {
    const doc = (await (await fetch(`${t.origin}/api/docs/json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    for (const [path, method] of [
      ['/contacts', 'get'],
      ['/contacts', 'post'],
      ['/contacts/{id}', 'get'],
      ['/contacts/{id}/timeline', 'get'],
      ['/contacts/{id}/update', 'post'],
      ['/contacts/{id}/tags/add', 'post'],
      ['/contacts/{id}/tags/remove', 'post'],
      ['/contacts/{id}/stage', 'post'],
      ['/contacts/{id}/score', 'post'],
      ['/contacts/{id}/delete', 'post'],
      ['/contacts/{id}/restore', 'post'],
      ['/trash/contacts', 'get'],
      ['/contacts/merge', 'post'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
  });
});

describe('who may call', () => {
  it('refuses missing and unknown credentials with 401', async () => {
    expect(await refusal(typedClient(t, 'lws_nope').contacts.list.query({}))).toMatchObject({ status: 401, code: 'unauthorized' });
    const r = await fetch(`${t.origin}/api/contacts`);
    expect(r.status).toBe(401);
  });
});
