import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { eventsOf, newTestOrg, rest, type TestOrg } from '../internal/contacts-support.ts';

/*
 * The events a change emits where the catalogue expects them and the code did not emit them before: tags and score
 * changes made through /v1 (single, batch and leads), tags a merge brings in, and the previous score on every
 * contact.score_changed.
 */

let t: TestApp;
let a: TestOrg;
beforeAll(async () => {
  t = await initTestApp();
  a = await newTestOrg(t);
});
afterAll(async () => t?.close());

const v1 = async (path: string, body: unknown) => {
  const r = await call(t, 'POST', path, { key: a.publicKey, body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const app = async (path: string, body: unknown = {}) => {
  const r = await rest(t, 'POST', path, a.ownerKey, body);
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
};
/** The events of one contact after `since` events were already there. */
const newEvents = async (id: string, since: number) => (await eventsOf(t, a.orgId, id)).slice(since);
const summary = (events: Awaited<ReturnType<typeof eventsOf>>) =>
  events.map((e) => [e.event, e.source, e.data.tag ?? e.data.previousScore ?? null]);

describe('/v1 contact upserts', () => {
  it('single: one contact.tag_added per tag gained (case-insensitive) and contact.score_changed with the previous score', async () => {
    const { id } = await v1('/contacts/upsert', { email: 'tags@example.com', tags: ['vip'] });
    expect(summary(await eventsOf(t, a.orgId, id))).toEqual([['contact.created', 'api', null]]);

    await v1('/contacts/upsert', { email: 'tags@example.com', tags: ['VIP', 'webinar', 'Webinar', 'beta'], phone: '+3361234' });
    const events = await newEvents(id, 1);
    // email 15 -> email 15 + phone 10
    expect(summary(events)).toEqual([
      ['contact.updated', 'api', null],
      ['contact.tag_added', 'api', 'webinar'],
      ['contact.tag_added', 'api', 'beta'],
      ['contact.score_changed', 'api', 15],
    ]);
    expect(events[3]!.data.contact).toMatchObject({ id, leadScore: 25, tags: ['vip', 'webinar', 'beta'] });
  });

  it('single: an upsert that adds nothing emits contact.updated alone', async () => {
    const { id } = await v1('/contacts/upsert', { email: 'same@example.com', tags: ['vip'] });
    await v1('/contacts/upsert', { email: 'same@example.com', tags: ['VIP'] });
    expect(summary(await newEvents(id, 1))).toEqual([['contact.updated', 'api', null]]);
  });

  it('batch: each row emits what it changed, in row order, for a contact named twice in the batch', async () => {
    const { id } = await v1('/contacts/upsert', { email: 'batch@example.com' });
    await v1('/contacts/batch-upsert', {
      contacts: [
        { email: 'batch@example.com', tags: ['one'] },
        { email: 'batch@example.com', tags: ['one', 'two'], title: 'CTO' },
      ],
    });
    expect(summary(await newEvents(id, 1))).toEqual([
      ['contact.updated', 'api', null],
      ['contact.tag_added', 'api', 'one'],
      ['contact.updated', 'api', null],
      ['contact.tag_added', 'api', 'two'],
      ['contact.score_changed', 'api', 15],
    ]);
  });

  it('a new contact created with tags emits contact.created only', async () => {
    const { id } = await v1('/contacts/upsert', { email: 'fresh@example.com', tags: ['a', 'b'] });
    await v1('/contacts/batch-upsert', { contacts: [{ email: 'fresh2@example.com', tags: ['c'] }] });
    expect(summary(await eventsOf(t, a.orgId, id))).toEqual([['contact.created', 'api', null]]);
    const [row] = await t.sql<{ id: string }>('select id from contacts where organization_id = ? and email = ?', [
      a.orgId,
      'fresh2@example.com',
    ]);
    expect(summary(await eventsOf(t, a.orgId, row!.id))).toEqual([['contact.created', 'api', null]]);
  });

  it('leads: a score on an existing contact emits contact.score_changed from api', async () => {
    const { id } = await v1('/contacts/upsert', { email: 'lead@example.com' });
    await v1('/leads', { email: 'lead@example.com', score: 70 });
    expect(summary(await newEvents(id, 1))).toEqual([
      ['contact.updated', 'api', null],
      ['contact.score_changed', 'api', 15],
    ]);
  });

  it('a refused row writes no event at all', async () => {
    const { id } = await v1('/contacts/upsert', { email: 'refused@example.com' });
    const r = await call(t, 'POST', '/contacts/upsert', {
      key: a.publicKey,
      body: { email: 'refused@example.com', tags: ['new'], companyDomain: 'nowhere.example' },
    });
    expect(r.status).toBe(422);
    expect(await newEvents(id, 1)).toEqual([]);
  });
});

describe('the application', () => {
  it('a merge emits contact.tag_added for each tag the primary gains from a duplicate', async () => {
    const primary = await app('/contacts', { firstName: 'Pat', email: 'pat@example.com', tags: ['Shared'] });
    const dup = await app('/contacts', { firstName: 'Pat', tags: ['shared', 'from-dup'] });
    await app('/contacts/merge', { primaryId: primary.id, secondaryIds: [dup.id] });
    const events = await newEvents(primary.id, 1);
    expect(summary(events)).toEqual([
      ['contact.updated', 'app', null],
      ['contact.tag_added', 'app', 'from-dup'],
    ]);
    expect(events[0]!.data.mergedIds).toEqual([dup.id]);
  });

  it('a booking that moves the score says what the score was', async () => {
    const c = await app('/contacts', { firstName: 'Bo', email: 'bo@example.com', source: 'manual' });
    const booking = await app('/bookings', { contactId: c.id, startsAt: '2026-12-01T09:00:00Z', endsAt: '2026-12-01T09:30:00Z' });
    await app(`/bookings/${booking.id}/cancel`);
    const scores = (await eventsOf(t, a.orgId, c.id)).filter((e) => e.event === 'contact.score_changed');
    // email 15, +20 with a confirmed booking, back to 15 when it is cancelled
    expect(scores.map((e) => [e.data.previousScore, e.data.contact.leadScore])).toEqual([
      [15, 35],
      [35, 15],
    ]);
  });
});
