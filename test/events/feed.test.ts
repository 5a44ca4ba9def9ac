import { decodeFeedCursor, encodeFeedCursor } from '#core/feed/cursor.ts';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { rest } from '../internal/contacts-support.ts';
import { commitEvents, emit, feed, feedPage, HeldTransaction, horizonPast, pending, readAll, settle } from './feed-support.ts';

/** Small, so that a filtered page bounded by it is cheap to set up. */
const WINDOW = 50;

let t: TestApp;
let pool: pg.Pool;
let org: { orgId: string; userId: string; publicKey: string; internalKey: string };
let all: string; // events:read
let contactsOnly: string; // contacts:read
beforeAll(async () => {
  t = await initTestApp({ FEED_SCAN_WINDOW: String(WINDOW) });
  pool = new pg.Pool({ connectionString: t.runtime.deps.config.DATABASE_URL, max: 4 });
  org = await t.newOrg();
  all = await t.newKey({ orgId: org.orgId, userId: org.userId, type: 'public', name: 'feed', permissions: ['events:read'] });
  contactsOnly = await t.newKey({ orgId: org.orgId, userId: org.userId, type: 'public', name: 'sync', permissions: ['contacts:read'] });
});
afterEach(() => HeldTransaction.rollbackAll());
afterAll(async () => {
  await pool?.end();
  await t?.close();
});

describe('GET /v1/events', () => {
  it('reads every committed event once, in commit order, as webhooks carry it, with the event id first', async () => {
    const start = (await feedPage(t, all, { after: 'now' })).nextCursor;
    const at = new Date('2026-11-22T14:03:07.123Z');
    const first = await emit(t, [
      pending(org.orgId, 'contact.created', { contact: { id: 'c1' } }, at),
      pending(org.orgId, 'deal.won', {}, at),
    ]);
    const second = await emit(t, [{ ...pending(org.orgId, 'ping', { message: 'hi' }, at), source: null }]);
    const { items, cursor } = await readAll(t, all, { after: start, limit: 1 });
    expect(items.map((i) => i.id)).toEqual([...first, ...second]);
    expect(items[0]).toEqual({
      id: first[0],
      event: 'contact.created',
      timestamp: at.toISOString(),
      source: 'api',
      data: { contact: { id: 'c1' } },
    });
    expect(Object.keys(items[0]!)).toEqual(['id', 'event', 'timestamp', 'source', 'data']);
    expect(items[2]).toEqual({ id: second[0], event: 'ping', timestamp: at.toISOString(), data: { message: 'hi' } });
    // Caught up: the cursor polls on from there, and sees nothing twice (the horizon may have moved on meanwhile).
    expect(await feedPage(t, all, { after: cursor })).toMatchObject({ items: [], hasMore: false });
  });

  it('items carry the row id even when the stored payload has none, or another', async () => {
    const start = (await feedPage(t, all, { after: 'now' })).nextCursor;
    const [id] = await emit(t, [pending(org.orgId, 'task.created')]);
    await t.sql(`update outbox_events set payload = payload || '{"id":"00000000-0000-4000-8000-000000000000"}' where id = ?`, [id]);
    expect((await feedPage(t, all, { after: start })).items.map((i) => i.id)).toEqual([id]);
    await t.sql(`update outbox_events set payload = payload - 'id' where id = ?`, [id]);
    expect((await feedPage(t, all, { after: start })).items.map((i) => i.id)).toEqual([id]);
  });

  it('after=now starts at the horizon: the next event is the first item', async () => {
    await emit(t, [pending(org.orgId, 'contact.updated')]);
    const now = await feedPage(t, all, { after: 'now' });
    expect(now).toEqual({ items: [], nextCursor: expect.any(String), hasMore: false });
    const [id] = await emit(t, [pending(org.orgId, 'contact.tag_added')]);
    const page = await feedPage(t, all, { after: now.nextCursor });
    expect(page.items.map((i) => i.id)).toEqual([id]);
    expect(page.hasMore).toBe(false);
  });

  it('without after, reads from the oldest event', async () => {
    const { items } = await readAll(t, all, { limit: 100 });
    const [row] = await t.sql<{ n: number }>('select count(*)::int as n from outbox_events where organization_id = ?', [org.orgId]);
    expect(items).toHaveLength(row!.n);
  });

  it('hasMore: true while a page is full and more are below the horizon, false once caught up', async () => {
    const start = (await feedPage(t, all, { after: 'now' })).nextCursor;
    const ids = await emit(
      t,
      Array.from({ length: 5 }, () => pending(org.orgId, 'deal.created')),
    );
    const p1 = await feedPage(t, all, { after: start, limit: 2 });
    expect([p1.items.length, p1.hasMore]).toEqual([2, true]);
    const p2 = await feedPage(t, all, { after: p1.nextCursor, limit: 2 });
    expect([p2.items.length, p2.hasMore]).toEqual([2, true]);
    // Exactly the remaining one: the page is not full, so the reader is caught up.
    const p3 = await feedPage(t, all, { after: p2.nextCursor, limit: 2 });
    expect([p3.items.length, p3.hasMore]).toEqual([1, false]);
    expect([...p1.items, ...p2.items, ...p3.items].map((i) => i.id)).toEqual(ids);
    // A page of exactly `limit` that ends the feed says so: a page reads one event more than it returns.
    const exact = await feedPage(t, all, { after: p2.nextCursor, limit: 1 });
    expect([exact.items.length, exact.hasMore]).toEqual([1, false]);
  });

  it('an empty page keeps a usable cursor that moves to the horizon, never back', async () => {
    const first = await feedPage(t, all, { after: 'now' });
    const again = await feedPage(t, all, { after: first.nextCursor });
    expect(again.items).toEqual([]);
    expect(BigInt(decodeFeedCursor(again.nextCursor)!.txid)).toBeGreaterThanOrEqual(BigInt(decodeFeedCursor(first.nextCursor)!.txid));
    const [id] = await emit(t, [pending(org.orgId, 'booking.created')]);
    expect((await feedPage(t, all, { after: again.nextCursor })).items.map((i) => i.id)).toEqual([id]);
  });

  it('stops below a transaction still running: nothing after it is returned until it ends, and then it is not skipped', async () => {
    const start = (await feedPage(t, all, { after: 'now' })).nextCursor;
    const held = await HeldTransaction.begin(pool);
    const [early] = await held.emit([pending(org.orgId, 'contact.created')]);
    const {
      ids: [later],
      txid,
    } = await commitEvents(t, [pending(org.orgId, 'contact.updated')]);
    const blocked = await feedPage(t, all, { after: start });
    expect(blocked).toMatchObject({ items: [], hasMore: false });
    await held.commit();
    await horizonPast(t, txid);
    const page = await feedPage(t, all, { after: blocked.nextCursor });
    expect(page.items.map((i) => i.id)).toEqual([early, later]);
  });

  it('never shows another organization its events, whatever the cursor', async () => {
    const other = await t.newOrg();
    const otherKey = await t.newKey({ orgId: other.orgId, userId: other.userId, type: 'public', name: 'x', permissions: ['events:read'] });
    const mine = await emit(t, [pending(org.orgId, 'deal.updated')]);
    const theirs = await emit(t, [pending(other.orgId, 'deal.updated')]);
    const read = (await readAll(t, otherKey, { limit: 100 })).items.map((i) => i.id);
    expect(read).toEqual(theirs);
    expect(read).not.toContain(mine[0]);
    const forged = encodeFeedCursor({ txid: '0', seq: '0' });
    expect((await readAll(t, otherKey, { after: forged, limit: 100 })).items.map((i) => i.id)).toEqual(theirs);
  });
});

describe('deletes and merges', () => {
  it('are in the feed as the application wrote them, for a contacts:read key too', async () => {
    const start = (await feedPage(t, all, { after: 'now' })).nextCursor;
    const made: string[] = [];
    for (const email of ['gone@feed.example', 'ada@feed.example', 'ada.l@feed.example']) {
      const r = await call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email, firstName: 'Ada' } });
      expect(r.status).toBe(200);
      made.push(r.body.id);
    }
    const [gone, primary, duplicate] = made as [string, string, string];
    expect((await rest(t, 'POST', `/contacts/${gone}/delete`, org.internalKey)).status).toBe(200);
    expect((await rest(t, 'POST', '/contacts/merge', org.internalKey, { primaryId: primary, secondaryIds: [duplicate] })).status).toBe(200);
    await settle(t);
    const items = (await readAll(t, contactsOnly, { after: start })).items;
    const shape = items.map((i) => [i.event, (i.data.contact as { id: string }).id, i.data.mergedInto ?? i.data.mergedIds ?? null]);
    expect(shape).toEqual([
      ['contact.created', gone, null],
      ['contact.created', primary, null],
      ['contact.created', duplicate, null],
      ['contact.deleted', gone, null],
      ['contact.updated', primary, [duplicate]],
      ['contact.deleted', duplicate, primary],
    ]);
  });
});

describe('types and windows', () => {
  it('filters by event name', async () => {
    const start = (await feedPage(t, all, { after: 'now' })).nextCursor;
    const ids = await emit(t, [pending(org.orgId, 'deal.won'), pending(org.orgId, 'deal.lost'), pending(org.orgId, 'task.created')]);
    const { items } = await readAll(t, all, { after: start, types: 'deal.lost,task.created' });
    expect(items.map((i) => i.id)).toEqual([ids[1], ids[2]]);
  });

  it('a filtered page over rows that do not match walks at most the window, and goes on from where it stopped', async () => {
    const start = (await feedPage(t, all, { after: 'now' })).nextCursor;
    const noise = () => Array.from({ length: WINDOW }, () => pending(org.orgId, 'tracking.page_visited'));
    await emit(t, [...noise(), ...noise()]);
    const [wanted] = await emit(t, [pending(org.orgId, 'form.submitted')]);
    const p1 = await feedPage(t, all, { after: start, types: 'form.submitted' });
    expect(p1).toMatchObject({ items: [], hasMore: true });
    const p2 = await feedPage(t, all, { after: p1.nextCursor, types: 'form.submitted' });
    expect(p2).toMatchObject({ items: [], hasMore: true });
    const p3 = await feedPage(t, all, { after: p2.nextCursor, types: 'form.submitted' });
    expect(p3).toMatchObject({ items: [{ id: wanted }], hasMore: false });
  });

  it('contacts:read alone reads the contact events only, and is refused other types', async () => {
    const start = (await feedPage(t, all, { after: 'now' })).nextCursor;
    const ids = await emit(t, [
      pending(org.orgId, 'contact.created'),
      pending(org.orgId, 'deal.created'),
      pending(org.orgId, 'contact.deleted'),
    ]);
    expect((await readAll(t, contactsOnly, { after: start })).items.map((i) => i.id)).toEqual([ids[0], ids[2]]);
    expect((await readAll(t, contactsOnly, { after: start, types: 'contact.deleted' })).items.map((i) => i.id)).toEqual([ids[2]]);
    for (const types of ['deal.created', 'contact.created,deal.created', 'ping']) {
      const res = await feed(t, contactsOnly, { after: start, types });
      expect(res.status, types).toBe(403);
      expect(res.body).toEqual({ error: expect.stringContaining('events:read'), code: 'insufficient_scope', required: 'events:read' });
    }
  });
});

describe('refusals', () => {
  it('refuses a key with neither permission, and an Internal key', async () => {
    const none = await t.newKey({
      orgId: org.orgId,
      userId: org.userId,
      type: 'public',
      name: 'w',
      permissions: ['contacts:write', 'companies:read'],
    });
    const res = await feed(t, none);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'insufficient_scope', required: 'events:read' });
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    const internal = await feed(t, org.internalKey);
    expect([internal.status, internal.body.code]).toEqual([403, 'wrong_api_surface']);
    const anonymous = await feed(t, '');
    expect([anonymous.status, anonymous.body.code]).toEqual([401, 'unauthorized']);
  });

  it.each([
    ['a cursor of another shape', { after: 'abc' }, 'invalid_cursor'],
    ['a uuid as cursor', { after: '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10' }, 'invalid_cursor'],
    ['a cursor re-encoded with padding', { after: `${encodeFeedCursor({ txid: '5', seq: '1' })}=` }, 'invalid_cursor'],
    ['a cursor too long', { after: 'A'.repeat(65) }, 'validation_failed'],
    ['an unknown type', { types: 'contact.created,contact.exploded' }, 'validation_failed'],
    ['an empty type', { types: 'contact.created,' }, 'validation_failed'],
    ['limit 0', { limit: 0 }, 'validation_failed'],
    ['limit 101', { limit: 101 }, 'validation_failed'],
    ['limit 2.5', { limit: '2.5' }, 'validation_failed'],
    ['limit abc', { limit: 'abc' }, 'validation_failed'],
    // Parameters it does not take: a misspelt filter must not read every event type.
    ['type in place of types', { type: 'contact.deleted' }, 'validation_failed'],
    ['a misspelt types', { tpyes: 'contact.deleted' }, 'validation_failed'],
    ['a parameter of another list', { updatedSince: '2026-01-01T00:00:00Z' }, 'validation_failed'],
    // Another list's cursor, or an out-of-range position, as the feed's own.
    [
      'a /v1/contacts cursor',
      {
        after: Buffer.from(JSON.stringify(['s2', 'contacts', '2026-01-01T00:00:00.000000Z', '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10']))
          .toString('base64url')
          .slice(0, 64),
      },
      'invalid_cursor',
    ],
    ['a txid past 2^64', { after: Buffer.from('1:18446744073709551616:1').toString('base64url') }, 'invalid_cursor'],
  ])('answers 400 to %s', async (_, query, code) => {
    const res = await feed(t, all, query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: expect.any(String), code });
  });
});
