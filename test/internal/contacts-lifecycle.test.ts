import { purgeTrash } from '#core/contacts/app/lifecycle.ts';
import { EVENT_NAMES } from '#core/events/names.ts';
import { BossRuntime } from '#core/jobs/boss.ts';
import { jobDefinitions } from '../../apps/server/src/jobs.ts';
import { newStorageKey, storageFor } from '#core/files/storage.ts';
import { PURGE_CONTACTS_CRON, PURGE_CONTACTS_QUEUE, purgeContactsJob } from '#core/contacts/app/purge-job.ts';
import { Readable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { finishedJob } from '../support/jobs.ts';
import { contactCount, eventsOf, newTestOrg, refusal, rest, type TestOrg } from './contacts-support.ts';

let t: TestApp;
let a: TestOrg;
let b: TestOrg;
const DAY = 86_400_000;

beforeAll(async () => {
  t = await initTestApp();
  [a, b] = await Promise.all([newTestOrg(t, 'max'), newTestOrg(t, 'max')]);
});
afterAll(async () => t?.close());
// Tests that move the server's clock put it back, so the next test starts at the wall clock's time.
afterEach(() => {
  t.clock.unfreeze();
  t.clock.set(new Date());
});

const trashedAgo = (id: string, days: number) =>
  t.sql(`update contacts set deleted_at = ?::timestamptz - make_interval(days => ?) where id = ?`, [t.clock.now(), days, id]);

describe('trash', () => {
  it('moves a contact to trash for any role: out of lists, uncounted, contact.deleted emitted', async () => {
    const c = await a.owner.contacts.create.mutate({ email: 'bin@example.com', firstName: 'Bin' });
    const count = await contactCount(t, a.orgId);
    const r = await a.member.contacts.delete.mutate({ id: c.id });
    expect(Date.parse(r.purgeAfter) - Date.parse(r.deletedAt)).toBe(30 * DAY);
    expect(await contactCount(t, a.orgId)).toBe(count - 1);
    expect((await eventsOf(t, a.orgId, c.id)).at(-1)).toMatchObject({
      event: 'contact.deleted',
      source: 'app',
      data: { contact: { id: c.id } },
    });
    expect(await refusal(a.owner.contacts.get.query({ id: c.id }))).toMatchObject({ status: 404 });
    expect((await a.owner.contacts.list.query({ limit: 100 })).items.map((x) => x.id)).not.toContain(c.id);
    expect(await refusal(a.owner.contacts.delete.mutate({ id: c.id }))).toMatchObject({ status: 404 });
    // Its email is free again for a new live contact.
    await expect(a.owner.contacts.create.mutate({ email: 'bin@example.com' })).resolves.toBeTruthy();
  });

  it('lists trash most recently deleted first, page by page, with when each contact leaves it, for its own organization only', async () => {
    const org = await newTestOrg(t);
    const ids: string[] = [];
    for (const name of ['t1', 't2', 't3']) {
      const c = await org.session.contacts.create.mutate({ firstName: name });
      await org.session.contacts.delete.mutate({ id: c.id });
      ids.push(c.id);
    }
    await trashedAgo(ids[0]!, 31);
    const first = await org.member.contacts.trash.query({ limit: 2 });
    const second = await org.member.contacts.trash.query({ limit: 2, cursor: first.nextCursor! });
    expect([...first.items, ...second.items].map((c) => c.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(second.nextCursor).toBeNull();
    expect(second.items[0]).toMatchObject({ firstName: 't1', restorable: false, daysLeft: 0 });
    expect(first.items[0]).toMatchObject({ firstName: 't3', restorable: true });
    expect((await b.owner.contacts.trash.query({})).items.map((c) => c.id)).not.toContain(ids[2]);
    const viaRest = await rest(t, 'GET', '/trash/contacts?limit=1', org.memberKey);
    expect(viaRest).toMatchObject({ status: 200, body: { items: [{ id: ids[2] }] } });
  });
});

describe('restore', () => {
  it('is for owners and admins: members get 403', async () => {
    const c = await a.owner.contacts.create.mutate({ firstName: 'Back' });
    await a.owner.contacts.delete.mutate({ id: c.id });
    expect(await refusal(a.member.contacts.restore.mutate({ id: c.id }))).toMatchObject({ status: 403, code: 'forbidden_role' });
    const count = await contactCount(t, a.orgId);
    await expect(a.admin.contacts.restore.mutate({ id: c.id })).resolves.toMatchObject({ id: c.id, firstName: 'Back' });
    expect(await contactCount(t, a.orgId)).toBe(count + 1);
    expect((await eventsOf(t, a.orgId, c.id)).at(-1)).toMatchObject({ event: 'contact.created', source: 'app', data: { restored: true } });
    expect((await a.owner.contacts.get.query({ id: c.id })).contact.id).toBe(c.id);
    expect(await refusal(a.owner.contacts.restore.mutate({ id: c.id }))).toMatchObject({ status: 409, code: 'not_in_trash' });
  });

  it('works for 30 days to the millisecond and answers 410 after', async () => {
    const [inside, outside] = [
      await a.owner.contacts.create.mutate({ firstName: 'In' }),
      await a.owner.contacts.create.mutate({ firstName: 'Out' }),
    ];
    t.clock.freeze();
    await a.owner.contacts.delete.mutate({ id: outside.id });
    t.clock.advance(1);
    await a.owner.contacts.delete.mutate({ id: inside.id });
    // Days left to restore, rounded up, by the server's clock (the console shows them): 30 at once, 1 on the last day.
    const left = async () =>
      (await a.owner.contacts.trash.query({ limit: 100 })).items.filter((c) => c.id === inside.id).map((c) => c.daysLeft);
    expect(await left()).toEqual([30]);
    t.clock.advance(29 * DAY + 1);
    expect(await left()).toEqual([1]);
    // `inside` has been in trash exactly 30 days, `outside` a millisecond longer.
    t.clock.advance(DAY - 1);
    expect(
      (await a.owner.contacts.trash.query({ limit: 100 })).items.filter((c) => c.id === inside.id || c.id === outside.id),
    ).toMatchObject([
      { id: inside.id, restorable: true },
      { id: outside.id, restorable: false },
    ]);
    // (Through a key: the org's test session, a day long, has ended by now.)
    await expect(a.owner.contacts.restore.mutate({ id: inside.id })).resolves.toMatchObject({ id: inside.id });
    const r = await rest(t, 'POST', `/contacts/${outside.id}/restore`, a.ownerKey, {});
    expect(r).toMatchObject({ status: 410, body: { code: 'restore_window_expired' } });
  });

  it('refuses when a live contact took the email meanwhile, naming it, and when the organization is at its cap', async () => {
    const org = await newTestOrg(t);
    const old = await org.owner.contacts.create.mutate({ email: 'again@example.com' });
    await org.owner.contacts.delete.mutate({ id: old.id });
    const fresh = await org.owner.contacts.create.mutate({ email: 'again@example.com' });
    expect(await refusal(org.owner.contacts.restore.mutate({ id: old.id }))).toMatchObject({
      status: 409,
      code: 'email_exists',
      error: 'Email already exists in your organization',
      body: { existingContactId: fresh.id },
    });
    const other = await org.owner.contacts.create.mutate({ firstName: 'Capped' });
    await org.owner.contacts.delete.mutate({ id: other.id });
    await t.sql('update contact_counters set contact_count = 10000 where organization_id = ?', [org.orgId]);
    expect(await refusal(org.owner.contacts.restore.mutate({ id: other.id }))).toMatchObject({
      status: 403,
      error: 'Contact limit reached',
    });
    expect((await org.owner.contacts.trash.query({})).items.map((c) => c.id)).toContain(other.id);
  });

  it('does not reach into another organization', async () => {
    const c = await a.owner.contacts.create.mutate({ firstName: 'Mine' });
    await a.owner.contacts.delete.mutate({ id: c.id });
    expect(await refusal(b.owner.contacts.restore.mutate({ id: c.id }))).toMatchObject({ status: 404, code: 'not_found' });
  });
});

async function seedTimeline(orgId: string, contactId: string, tag: string) {
  const [stage] = await t.sql<{ id: string; pipeline_id: string }>(
    `select s.id, s.pipeline_id from pipeline_stages s join pipelines p on p.id = s.pipeline_id where p.organization_id = ? order by s.position limit 1`,
    [orgId],
  );
  const args = [orgId, contactId];
  await t.sql(`insert into notes (organization_id, contact_id, body) values (?, ?, 'n')`, args);
  await t.sql(`insert into deals (organization_id, contact_id, pipeline_id, stage_id, title) values (?, ?, ?, ?, 'd')`, [
    ...args,
    stage!.pipeline_id,
    stage!.id,
  ]);
  await t.sql(`insert into pipeline_items (organization_id, contact_id, pipeline_id, stage_id) values (?, ?, ?, ?)`, [
    ...args,
    stage!.pipeline_id,
    stage!.id,
  ]);
  await t.sql(`insert into tasks (organization_id, contact_id, title) values (?, ?, 't')`, args);
  await t.sql(
    `insert into bookings (organization_id, contact_id, starts_at, ends_at) values (?, ?, now(), now() + interval '1 hour')`,
    args,
  );
  await t.sql(`insert into workflow_runs (organization_id, contact_id, workflow) values (?, ?, 'w')`, args);
  await t.sql(`insert into ai_actions (organization_id, contact_id, kind, summary) values (?, ?, 'k', 's')`, args);
  await t.sql(
    `insert into contact_files (organization_id, contact_id, kind, filename, content_type, size, sha256, storage_key) values (?, ?, 'file', 'f.pdf', 'application/pdf', 1, 'x', ?)`,
    [...args, `key-${tag}`],
  );
  const [conv] = await t.sql<{ id: string }>(`insert into conversations (organization_id, contact_id) values (?, ?) returning id`, args);
  await t.sql(
    `insert into messages (organization_id, conversation_id, contact_id, direction, from_address, to_address, body, status) values (?, ?, ?, 'outbound', 'a', 'b', 'hi', 'sent')`,
    [orgId, conv!.id, contactId],
  );
}

const TIMELINE_TABLES = [
  'notes',
  'deals',
  'pipeline_items',
  'tasks',
  'bookings',
  'workflow_runs',
  'ai_actions',
  'contact_files',
  'conversations',
  'messages',
];

async function rowsAbout(contactId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of [...TIMELINE_TABLES, 'contacts']) {
    const [row] = await t.sql<{ n: number }>(
      `select count(*)::int as n from ${table} where ${table === 'contacts' ? 'id' : 'contact_id'} = ?`,
      [contactId],
    );
    out[table] = row!.n;
  }
  return out;
}

describe('nightly purge', () => {
  it('deletes contacts more than 30 days in trash for good, with their timeline and undelivered events, across organizations', async () => {
    // Events are queued for dispatch only when an endpoint subscribes to them (issue 19): both organizations have one.
    for (const org of [a, b]) {
      await t.sql(`insert into webhook_endpoints (organization_id, kind, url, events, secret) values (?, 'endpoint', ?, ?::text[], ?)`, [
        org.orgId,
        'https://receiver.invalid/purge',
        EVENT_NAMES,
        'whsec_purge',
      ]);
    }
    const live = await a.owner.contacts.create.mutate({ email: 'live@purge.example' });
    const old = await a.owner.contacts.create.mutate({ email: 'old@purge.example' });
    const recent = await a.owner.contacts.create.mutate({ email: 'recent@purge.example' });
    const foreign = await b.owner.contacts.create.mutate({ email: 'foreign@purge.example' });
    for (const [c, tag] of [
      [live, 'live'],
      [old, 'old'],
      [recent, 'recent'],
      [foreign, 'foreign'],
    ] as const) {
      await seedTimeline(c.id === foreign.id ? b.orgId : a.orgId, c.id, tag);
    }
    await a.owner.contacts.delete.mutate({ id: old.id });
    await b.owner.contacts.delete.mutate({ id: foreign.id });
    await a.owner.contacts.delete.mutate({ id: recent.id });
    // `recent` went to trash five days after the others.
    await t.sql(`update contacts set deleted_at = deleted_at + interval '5 days' where id = ?`, [recent.id]);
    // One event about `old` was already delivered; the rest are pending.
    await t.sql(
      `delete from outbox_pending where event_id in (select id from outbox_events where event = 'contact.created' and payload->'data'->'contact'->>'id' = ?)`,
      [old.id],
    );

    // Earlier tests left expired contacts in trash: a purge as of today takes those, and nothing of this test's.
    await purgeTrash(t.runtime.deps.db, new Date());
    expect(await purgeTrash(t.runtime.deps.db, new Date(Date.now() + 29 * DAY))).toEqual({ contacts: 0, events: 0, storageKeys: [] });

    const now = new Date(Date.now() + 31 * DAY);
    const due = await t.sql<{ id: string }>(`select id from contacts where deleted_at < ?::timestamptz - interval '30 days'`, [
      now.toISOString(),
    ]);
    expect(due.map((r) => r.id)).toEqual(expect.arrayContaining([old.id, foreign.id]));
    expect(due.map((r) => r.id)).not.toContain(recent.id);
    const result = await purgeTrash(t.runtime.deps.db, now);
    expect(result.contacts).toBe(due.length);
    const [left] = await t.sql<{ n: number }>(
      `select count(*)::int as n from contacts where deleted_at < ?::timestamptz - interval '30 days'`,
      [now.toISOString()],
    );
    expect(left!.n).toBe(0);
    expect(result.storageKeys.sort()).toEqual(['key-foreign', 'key-old']);
    const none = Object.fromEntries([...TIMELINE_TABLES, 'contacts'].map((k) => [k, 0]));
    const all = Object.fromEntries([...TIMELINE_TABLES, 'contacts'].map((k) => [k, 1]));
    expect(await rowsAbout(old.id)).toEqual(none);
    expect(await rowsAbout(foreign.id)).toEqual(none);
    expect(await rowsAbout(recent.id)).toEqual(all);
    expect(await rowsAbout(live.id)).toEqual(all);
    // Delivered events stay as the record of what receivers were sent; pending ones about the purged are dropped.
    expect((await eventsOf(t, a.orgId, old.id)).map((e) => e.event)).toEqual(['contact.created']);
    expect(await eventsOf(t, b.orgId, foreign.id)).toEqual([]);
    expect((await eventsOf(t, a.orgId, recent.id)).map((e) => e.event)).toEqual(['contact.created', 'contact.deleted']);
    expect(await refusal(a.owner.contacts.restore.mutate({ id: old.id }))).toMatchObject({ status: 404 });
    expect(await purgeTrash(t.runtime.deps.db, new Date(Date.now() + 31 * DAY))).toEqual({ contacts: 0, events: 0, storageKeys: [] });
  });

  it('purges by the job\u2019s clock: a contact goes 30 days and 1 s after its deletion, one 29 days in trash stays', async () => {
    const [gone, kept] = [
      await a.owner.contacts.create.mutate({ firstName: 'Gone' }),
      await a.owner.contacts.create.mutate({ firstName: 'Kept' }),
    ];
    t.clock.freeze();
    const deletedAt = t.clock.now();
    expect(await a.owner.contacts.delete.mutate({ id: gone.id })).toMatchObject({
      deletedAt: deletedAt.toISOString(),
      purgeAfter: new Date(deletedAt.getTime() + 30 * DAY).toISOString(),
    });
    t.clock.advance(DAY);
    await a.owner.contacts.delete.mutate({ id: kept.id });
    const job = purgeContactsJob(t.runtime.deps);
    const purge = () => job.handle(job.parse({}));

    t.clock.set(new Date(deletedAt.getTime() + 30 * DAY));
    await purge();
    expect([(await rowsAbout(gone.id)).contacts, (await rowsAbout(kept.id)).contacts]).toEqual([1, 1]);
    t.clock.advance(1_000);
    await purge();
    expect([(await rowsAbout(gone.id)).contacts, (await rowsAbout(kept.id)).contacts]).toEqual([0, 1]);
    await expect(a.owner.contacts.restore.mutate({ id: kept.id })).resolves.toMatchObject({ id: kept.id });
  });

  it("removes the stored bytes of the purged contacts' files", async () => {
    const doomed = await a.owner.contacts.create.mutate({ firstName: 'Filed' });
    const storage = storageFor(t.runtime.deps.config);
    const key = newStorageKey(a.orgId);
    await storage.put(key, Readable.from([Buffer.from('hello')]));
    await t.sql(
      `insert into contact_files (organization_id, contact_id, kind, filename, content_type, size, sha256, storage_key)
       values (?, ?, 'file', 'a.txt', 'text/plain', 5, 'x', ?)`,
      [a.orgId, doomed.id, key],
    );
    await a.owner.contacts.delete.mutate({ id: doomed.id });
    await trashedAgo(doomed.id, 31);
    const job = purgeContactsJob(t.runtime.deps);
    await job.handle(job.parse({}));
    expect(await storage.get(key)).toBeNull();
  });

  it('is a pg-boss cron job at 05:00 UTC with one schedule however many workers register it, and purges when it runs', async () => {
    expect(PURGE_CONTACTS_CRON).toBe('0 5 * * *');
    expect(jobDefinitions(t.runtime.deps).map((d) => d.queue)).toContain(PURGE_CONTACTS_QUEUE);
    // Two worker processes: this app's runtime and a second pg-boss instance on the same database.
    const second = new BossRuntime(t.runtime.deps.config.DATABASE_URL!, pino({ level: 'silent' }));
    try {
      await t.runtime.boss.work([purgeContactsJob(t.runtime.deps)]);
      await second.start([purgeContactsJob(t.runtime.deps)]);
      await second.work([purgeContactsJob(t.runtime.deps)]);
      const schedules = await t.sql<{ cron: string; timezone: string }>('select cron, timezone from pgboss.schedule where name = ?', [
        PURGE_CONTACTS_QUEUE,
      ]);
      expect(schedules).toEqual([{ cron: '0 5 * * *', timezone: 'UTC' }]);

      const doomed = await a.owner.contacts.create.mutate({ firstName: 'Doomed' });
      await a.owner.contacts.delete.mutate({ id: doomed.id });
      await trashedAgo(doomed.id, 31);
      // What a cron tick sends: the schedule's data, `{}`.
      const id = await t.runtime.boss.boss.send(PURGE_CONTACTS_QUEUE, {});
      expect(await finishedJob(t, PURGE_CONTACTS_QUEUE, id!)).toMatchObject({ state: 'completed' });
      expect((await rowsAbout(doomed.id)).contacts).toBe(0);
    } finally {
      await second.stop();
    }
  });
});
