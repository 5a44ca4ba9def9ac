import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { internalClient, internalRest, trpcFailure } from '../support/internal.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

const client = (key: string) => internalClient(t, key);
const api = (method: string, path: string, key: string, body?: unknown) => internalRest(t, method, path, key, body);
const failure = trpcFailure;
/** A member's client and a contact with only an email: score 15 before any booking. */
async function setup(contact: Record<string, unknown> = {}) {
  const org = await t.newOrg({ plan: 'max' });
  const c = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email: `c-${randomUUID()}@example.com`, ...contact } });
  const [u] = await t.sql<{ id: string }>(
    `insert into users (organization_id, email, password_hash, role) values (?, ?, 'x', 'member') returning id`,
    [org.orgId, `m-${randomUUID()}@example.com`],
  );
  const member = client(await t.newKey({ orgId: org.orgId, userId: u!.id, name: 'member', type: 'internal' }));
  return { ...org, member, contactId: c.body.id as string };
}
const score = async (contactId: string) =>
  (await t.sql<{ lead_score: number }>(`select lead_score from contacts where id = ?`, [contactId]))[0]!.lead_score;
const events = (orgId: string) =>
  t.sql<{ event: string; payload: any }>(
    `select event, payload from outbox_events where organization_id = ? and (event like 'booking.%' or event = 'contact.score_changed')
     order by created_at, event`,
    [orgId],
  );
const slot = (h: number) => ({ startsAt: `2026-12-0${h}T10:00:00Z`, endsAt: `2026-12-0${h}T10:30:00Z` });

describe('bookings', () => {
  it('books a contact: booking.created, and the +20 booking bonus with contact.score_changed', async () => {
    const { orgId, member, contactId } = await setup();
    expect(await score(contactId)).toBe(15);
    const booking = await member.bookings.create.mutate({ contactId, title: 'Demo', ...slot(1) });
    expect(booking).toMatchObject({
      contactId,
      title: 'Demo',
      status: 'confirmed',
      cancelledAt: null,
      startsAt: '2026-12-01T10:00:00.000Z',
    });
    expect(await score(contactId)).toBe(35);
    const [created, changed, ...rest] = await events(orgId);
    expect(rest).toEqual([]);
    expect(created).toMatchObject({ event: 'booking.created', payload: { source: 'app', data: { booking } } });
    expect(changed).toMatchObject({
      event: 'contact.score_changed',
      payload: { source: 'app', data: { contact: { id: contactId, leadScore: 35 } } },
    });
  });

  it('keeps the bonus while any booking is confirmed and removes it with the last cancellation', async () => {
    const { orgId, member, internalKey, contactId } = await setup();
    const first = await member.bookings.create.mutate({ contactId, ...slot(1) });
    const second = await api('POST', '/bookings', internalKey, { contactId, ...slot(2) });
    expect(second.status).toBe(201);
    expect(await score(contactId)).toBe(35);

    const cancelled = await member.bookings.cancel.mutate({ id: first.id });
    expect(cancelled).toMatchObject({ status: 'cancelled', cancelledAt: expect.any(String) });
    expect(await score(contactId)).toBe(35);
    expect(await api('POST', `/bookings/${first.id}/cancel`, internalKey, {})).toMatchObject({
      status: 200,
      body: { cancelledAt: cancelled.cancelledAt },
    });

    await api('POST', `/bookings/${second.body.id}/cancel`, internalKey, {});
    expect(await score(contactId)).toBe(15);
    expect((await events(orgId)).map((e) => e.event)).toEqual([
      'booking.created',
      'contact.score_changed',
      'booking.created',
      'booking.cancelled',
      'booking.cancelled',
      'contact.score_changed',
    ]);
    expect((await events(orgId)).at(-1)?.payload.data.contact.leadScore).toBe(15);
  });

  it('counts one bonus under concurrent bookings, and none on top of a booking source or a manual override', async () => {
    const a = await setup();
    await Promise.all([1, 2, 3].map((d) => a.member.bookings.create.mutate({ contactId: a.contactId, ...slot(d) })));
    expect(await score(a.contactId)).toBe(35);
    expect((await events(a.orgId)).filter((e) => e.event === 'contact.score_changed')).toHaveLength(1);

    const booked = await setup({ source: 'booking' });
    expect(await score(booked.contactId)).toBe(35);
    await booked.member.bookings.create.mutate({ contactId: booked.contactId, ...slot(1) });
    expect(await score(booked.contactId)).toBe(35);

    const fixed = await setup();
    await t.sql(`update contacts set score_override = 70, lead_score = 70 where id = ?`, [fixed.contactId]);
    const b = await fixed.member.bookings.create.mutate({ contactId: fixed.contactId, ...slot(1) });
    await fixed.member.bookings.cancel.mutate({ id: b.id });
    expect(await score(fixed.contactId)).toBe(70);
    for (const o of [booked, fixed]) expect((await events(o.orgId)).some((e) => e.event === 'contact.score_changed')).toBe(false);
  });

  it('refuses an end before (or at) the start, with nothing stored', async () => {
    const { orgId, member, internalKey, contactId } = await setup();
    const r = await api('POST', '/bookings', internalKey, { contactId, startsAt: '2026-12-01T10:00:00Z', endsAt: '2026-12-01T09:00:00Z' });
    expect(r).toMatchObject({ status: 400, body: { code: 'validation_failed', issues: [{ path: 'endsAt' }] } });
    expect(
      await failure(member.bookings.create.mutate({ contactId, startsAt: '2026-12-01T10:00:00Z', endsAt: '2026-12-01T10:00:00Z' })),
    ).toEqual({ status: 400, code: 'validation_failed' });
    expect(await t.sql(`select id from bookings where organization_id = ?`, [orgId])).toEqual([]);
    expect(await score(contactId)).toBe(15);
  });

  it('lists bookings by contact and status', async () => {
    const { member, contactId } = await setup();
    const one = await member.bookings.create.mutate({ contactId, ...slot(1) });
    await member.bookings.create.mutate({ contactId, ...slot(2) });
    await member.bookings.cancel.mutate({ id: one.id });
    expect((await member.bookings.list.query({ contactId, status: 'confirmed' })).items).toHaveLength(1);
    expect((await member.bookings.list.query({ status: 'cancelled' })).items.map((b) => b.id)).toEqual([one.id]);
    expect(await member.bookings.get.query({ id: one.id })).toMatchObject({ status: 'cancelled' });
  });

  it("keeps other organizations' bookings and contacts out of reach, and trashed contacts out of booking", async () => {
    const a = await setup();
    const b = await setup();
    const booking = await a.member.bookings.create.mutate({ contactId: a.contactId, ...slot(1) });
    expect(await failure(b.member.bookings.create.mutate({ contactId: a.contactId, ...slot(1) }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    expect(await failure(b.member.bookings.get.query({ id: booking.id }))).toEqual({ status: 404, code: 'not_found' });
    expect(await failure(b.member.bookings.cancel.mutate({ id: booking.id }))).toEqual({ status: 404, code: 'not_found' });
    expect(await api('GET', `/bookings/${booking.id}`, b.internalKey)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await b.member.bookings.list.query({})).items).toEqual([]);
    expect(await a.member.bookings.get.query({ id: booking.id })).toMatchObject({ status: 'confirmed' });
    expect(await score(a.contactId)).toBe(35);

    await t.sql(`update contacts set deleted_at = now() where id = ?`, [b.contactId]);
    expect(await failure(b.member.bookings.create.mutate({ contactId: b.contactId, ...slot(1) }))).toEqual({
      status: 404,
      code: 'not_found',
    });
  });
});
