/**
 * Issue 31: reads served by a PostgreSQL streaming replica, on a real primary and hot standby started here
 * (test/support/standby.ts says how the standby is made). The server runs with DATABASE_REPLICA_URLS at the standby;
 * which pool answered each read is read from its own metrics. What is held:
 * - every replica-safe read of docs/scaling.md is answered by the standby, and nothing else is;
 * - the changes feed read from the standby under 8 concurrent writers on the primary never skips and never repeats an
 *   event, also when its polls alternate between servers at different lags;
 * - read-your-writes: an upsert then a get by the same key sees the write with the standby's replay paused;
 * - the standby paused past the lag bound, stopped, and started again: reads keep answering, then return to it;
 * - a revoked key is refused on its next request while its reads would go to a lagging standby.
 */
import { randomUUID } from 'node:crypto';
import { createApiKey } from '#core/accounts/service.ts';
import { decodeFeedCursor } from '#core/feed/cursor.ts';
import { listFeed } from '#core/feed/service.ts';
import type { Actor } from '#core/auth/actor.ts';
import { REPLICA_READS } from '#core/replicas/routes.ts';
import type { Db } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { startReplicationPair, type ReplicationPair } from '../support/standby.ts';
import { sampleValue, scrapeMetrics } from '../ops/prom-text.ts';
import { readsOf } from './support.ts';
import { waiter } from '../support/waiter.ts';

let pair: ReplicationPair;
let t: TestApp;
let org: Awaited<ReturnType<TestApp['newOrg']>>;
/** Reads only: never has a write to wait for, so its reads go to the standby whenever it is usable. */
let reader: string;
let writer: string;

const MAX_LAG_MS = 30_000;

beforeAll(async () => {
  pair = await startReplicationPair();
  t = await initTestApp({
    DATABASE_URL: pair.primary.url,
    DATABASE_REPLICA_URLS: pair.standby.url,
    DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
    // Probed often, so that the tests wait little for a change to be seen (they wait on it, never on a time); not so
    // often that a probe delayed on a loaded host leaves the last measure older than three intervals (the guard then
    // sends reads to the primary as lagging: seen at 50 ms on a machine at load 40).
    DATABASE_REPLICA_CHECK_MS: '500',
  });
  org = await t.newOrg();
  const key = (permissions: string[]) => t.newKey({ orgId: org.orgId, userId: org.userId, name: 'k', type: 'public', permissions });
  reader = await key(['contacts:read', 'companies:read', 'events:read']);
  writer = await key(['contacts:read', 'contacts:write', 'companies:write']);
});
afterAll(async () => {
  await t?.close();
  await pair?.stop();
});

const { counts, served, until } = readsOf(() => t.origin);

const upsert = (key: string, email: string) => call(t, 'POST', '/contacts/upsert', { key, body: { email } });

describe('replica-safe reads', () => {
  it('answers every replica-safe read of docs/scaling.md from the standby', async () => {
    const contact = (await upsert(writer, `every-${randomUUID()}@example.com`)).body.id as string;
    const domain = `every-${randomUUID()}.example`;
    const company = (await call(t, 'POST', '/companies/upsert', { key: writer, body: { domain, name: 'Every' } })).body.id as string;
    await pair.standby.caughtUp();
    // Seen by a probe after the catch-up, so the reads below have no reason to go elsewhere.
    await until(
      'the standby serves a read',
      () => call(t, 'GET', `/contacts/${contact}`, { key: reader }),
      (d) => d.replica === 1,
    );
    const email = (await call(t, 'GET', `/contacts/${contact}`, { key: reader })).body.email as string;
    const urls: Record<string, string> = {
      'GET /api/v1/contacts': '/api/v1/contacts',
      'GET /api/v1/contacts/search': `/api/v1/contacts/search?email=${encodeURIComponent(email)}`,
      'GET /api/v1/contacts/{id}': `/api/v1/contacts/${contact}`,
      'GET /api/v1/companies': '/api/v1/companies',
      'GET /api/v1/companies/search': `/api/v1/companies/search?domain=${domain}`,
      'GET /api/v1/companies/{id}': `/api/v1/companies/${company}`,
      'GET /api/v1/events': '/api/v1/events',
      'GET /api/contacts': '/api/contacts',
      'GET /api/contacts/{id}': `/api/contacts/${contact}`,
      'GET /api/contacts/{id}/timeline': `/api/contacts/${contact}/timeline`,
      'GET /api/contacts/{id}/messages': `/api/contacts/${contact}/messages`,
      'GET /api/contacts/{id}/files': `/api/contacts/${contact}/files`,
      'GET /api/companies': '/api/companies',
      'GET /api/companies/{id}': `/api/companies/${company}`,
      'GET /api/deals': '/api/deals',
      'GET /api/tasks': '/api/tasks',
      'GET /api/bookings': '/api/bookings',
      'GET /api/trash/contacts': '/api/trash/contacts',
      'GET /api/forms': '/api/forms',
      // No such workflow or endpoint: a 404 is the standby's answer too, found by the same statements.
      'GET /api/workflows/{id}/runs': `/api/workflows/${randomUUID()}/runs`,
      'GET /api/webhooks/{id}/deliveries': `/api/webhooks/${randomUUID()}/deliveries`,
      'GET /api/integrations/automation/triggers/{event}/poll': '/api/integrations/automation/triggers/contact.created/poll',
      'GET /api/integrations/automation/contacts/find': `/api/integrations/automation/contacts/find?email=${encodeURIComponent(email)}`,
    };
    expect(Object.keys(urls).sort()).toEqual([...REPLICA_READS].sort());
    for (const [route, url] of Object.entries(urls)) {
      const key = url.startsWith('/api/v1/') ? reader : org.internalKey;
      const { value: status, delta } = await served(async () => {
        const res = await fetch(`${t.origin}${url}`, { headers: { authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        return res.status;
      });
      expect([route, status]).toEqual([route, url.includes('/workflows/') || url.includes('/webhooks/') ? 404 : 200]);
      expect([route, delta]).toEqual([route, { replica: 1, primary: 0, down: 0, lagging: 0, not_replayed: 0, read_failed: 0 }]);
    }
  });

  it('keeps every write and every other read on the primary', async () => {
    const { value, delta } = await served(async () => [
      await upsert(writer, `primary-${randomUUID()}@example.com`),
      // Not in the list: a key's own details, the pipelines and the API keys.
      await fetch(`${t.origin}/api/me`, { headers: { authorization: `Bearer ${org.internalKey}` } }),
      await fetch(`${t.origin}/api/pipelines`, { headers: { authorization: `Bearer ${org.internalKey}` } }),
    ]);
    expect(value.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(delta).toEqual({ replica: 0, primary: 0, down: 0, lagging: 0, not_replayed: 0, read_failed: 0 });
  });
});

describe('the changes feed on the standby', () => {
  it('never skips and never repeats an event under 8 concurrent writers, whichever server and lag each poll meets', async () => {
    const feedKey = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'feed', type: 'public', permissions: ['events:read'] });
    const writers = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.newKey({ orgId: org.orgId, userId: org.userId, name: 'w', type: 'public', permissions: ['contacts:write'] }),
      ),
    );
    // Both readers start from now: what came before belongs to the other tests.
    const eventIds = async () =>
      new Set((await t.sql<{ id: string }>('select id from outbox_events where organization_id = ?', [org.orgId])).map((r) => r.id));
    const before = await eventIds();
    const start = (await call(t, 'GET', '/events?after=now', { key: feedKey })).body.nextCursor as string;
    const primaryDb: Db = t.runtime.deps.db;
    const standbyDb: Db = t.runtime.deps.replicas!.pools().replica1!;
    const actor = { orgId: org.orgId, permissions: ['events:read'] } as unknown as Actor;
    const window = t.runtime.deps.config.FEED_SCAN_WINDOW;

    interface Reader {
      seen: Set<string>;
      repeated: string[];
      cursor: string;
      polls: number;
    }
    const readerOf = (): Reader => ({ seen: new Set(), repeated: [], cursor: start, polls: 0 });
    const take = (r: Reader, page: { items: { id: string }[]; nextCursor: string }) => {
      for (const { id } of page.items) {
        if (r.seen.has(id)) r.repeated.push(id);
        r.seen.add(id);
      }
      r.cursor = page.nextCursor;
      r.polls++;
    };
    // Through the server: its polls go to the standby while it is usable (lagging or not), else to the primary.
    const viaHttp = readerOf();
    const pollHttp = async () => {
      const res = await call(t, 'GET', `/events?limit=20&after=${encodeURIComponent(viaHttp.cursor)}`, { key: feedKey });
      expect(res.status).toBe(200);
      take(viaHttp, res.body);
    };
    // Through the service, each poll on a server picked at random: the primary (no lag) or the standby (paused or not).
    const mixed = readerOf();
    const pollMixed = async () => {
      const db = Math.random() < 0.5 ? primaryDb : standbyDb;
      take(mixed, await listFeed(db, actor, { limit: 20, after: mixed.cursor }, { window }));
    };

    // The readers poll as the writes go on, once per 4 writes each (a poller's pace, and under the key's rate limit).
    let written = 0;
    let done = false;
    const progress = waiter();
    const toggles: Promise<void>[] = [];
    let paused = false;
    const write = async (key: string, n: number) => {
      for (let i = 0; i < n; i++) {
        expect((await upsert(key, `feed-${randomUUID()}@example.com`)).status).toBe(200);
        // Every 25 writes the standby's replay stops or goes on: polls meet it further behind, then catching up.
        if (++written % 25 === 0) {
          paused = !paused;
          toggles.push(paused ? pair.standby.pauseReplay() : pair.standby.resumeReplay());
        }
        progress.wake();
      }
    };
    const readWhileWriting = async (poll: () => Promise<void>) => {
      for (let mark = 4; !done; mark = written + 4) {
        await poll();
        await progress.until(
          () => done || written >= mark,
          () => 'the writers stalled',
          120_000,
        );
      }
    };
    const countsBefore = await counts();
    const readers = [readWhileWriting(pollHttp), readWhileWriting(pollMixed)];
    await Promise.all(writers.map((key) => write(key, 25)));
    done = true;
    progress.wake();
    await Promise.all([...readers, ...toggles]);
    await pair.standby.resumeReplay();
    await pair.standby.caughtUp();

    const expectedRows = (
      await t.sql<{ id: string; txid: string }>('select id, txid::text as txid from outbox_events where organization_id = ?', [org.orgId])
    ).filter((r) => !before.has(r.id));
    const expected = new Set(expectedRows.map((r) => r.id));
    // One contact.created per upsert at least.
    expect(expected.size).toBeGreaterThanOrEqual(200);
    const last = expectedRows.reduce((m, r) => (BigInt(r.txid) > m ? BigInt(r.txid) : m), 0n);
    for (const [reader, poll] of [
      [viaHttp, pollHttp],
      [mixed, pollMixed],
    ] as const) {
      // Until the cursor is past the last transaction that wrote: anything not seen by then was skipped for good.
      for (const deadline = Date.now() + 60_000; BigInt(decodeFeedCursor(reader.cursor)!.txid) <= last; ) {
        if (Date.now() > deadline) throw new Error('the feed never passed the last write');
        await poll();
      }
      expect(reader.repeated).toEqual([]);
      expect([...expected].filter((id) => !reader.seen.has(id))).toEqual([]);
      // Nothing from before `start`: the other tests' events are behind it.
      expect([...reader.seen].filter((id) => !expected.has(id))).toEqual([]);
    }
    // The server's polls were the standby's to answer (the feed key never writes): a probe running late under load may
    // send one to the primary as lagging, hence not all of them.
    const fromStandby = (await counts()).replica - countsBefore.replica;
    expect(fromStandby).toBeGreaterThanOrEqual(viaHttp.polls / 2);
  });
});

describe('read-your-writes', () => {
  it("a key's get right after its upsert sees the write with the standby's replay paused; another key's read meets the standby", async () => {
    await pair.standby.pauseReplay();
    try {
      const email = `ryw-${randomUUID()}@example.com`;
      const { value, delta } = await served(async () => {
        const up = await upsert(writer, email);
        expect(up.status).toBe(200);
        const id = up.body.id as string;
        return [
          await call(t, 'GET', `/contacts/${id}`, { key: writer }),
          await call(t, 'GET', `/contacts/search?email=${email}`, { key: writer }),
        ];
      });
      expect(value.map((r) => [r.status, r.body.email])).toEqual([
        [200, email],
        [200, email],
      ]);
      expect(delta).toMatchObject({ replica: 0, primary: 2, not_replayed: 2 });
      // The reader never wrote: it is sent to the standby, which has not replayed the upsert. The routing is real.
      const other = await served(() => call(t, 'GET', `/contacts/search?email=${email}`, { key: reader }));
      expect([other.value.status, other.value.body.code]).toEqual([404, 'not_found']);
      expect(other.delta).toMatchObject({ replica: 1, primary: 0 });
    } finally {
      await pair.standby.resumeReplay();
    }
    // Once the standby has replayed the write, the writer's reads go back to it.
    await until(
      "the writer's reads return to the standby",
      () => call(t, 'GET', '/contacts?limit=1', { key: writer }),
      (d) => d.replica === 1,
    );
  });
});

describe('a revoked key', () => {
  it('is refused on its next request, though its reads would go to a standby that has not replayed the revocation', async () => {
    const created = await createApiKey(t.runtime.deps.db, {
      orgId: org.orgId,
      userId: org.userId,
      name: 'to revoke',
      type: 'public',
      permissions: ['contacts:read'],
    });
    await pair.standby.caughtUp();
    await until(
      'the key reads from the standby',
      () => call(t, 'GET', '/contacts?limit=1', { key: created.value }),
      (d) => d.replica === 1,
    );
    await pair.standby.pauseReplay();
    try {
      const revoked = await fetch(`${t.origin}/api/api-keys/${created.id}/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.internalKey}` },
      });
      expect(revoked.status).toBe(200);
      // The standby still holds the key as active; authentication never asks it.
      const standbySees = await t.runtime.deps
        .replicas!.pools()
        .replica1!.raw('select revoked_at from api_keys where id = $1', [created.id]);
      expect(standbySees.rows).toEqual([{ revoked_at: null }]);
      const { value, delta } = await served(() => call(t, 'GET', '/contacts?limit=1', { key: created.value }));
      expect([value.status, value.body.code]).toEqual([401, 'unauthorized']);
      expect(delta).toMatchObject({ replica: 0, primary: 0 });
    } finally {
      await pair.standby.resumeReplay();
    }
  });
});

describe('the lag guard', () => {
  const read = () => call(t, 'GET', '/contacts?limit=1', { key: reader });

  it('sends reads to the primary while the standby lags past the bound, and back once it catches up', async () => {
    await until('the standby serves', read, (d) => d.replica === 1);
    await pair.standby.pauseReplay();
    try {
      // Something the paused standby has not replayed, then the app's clock past the bound since its last replayed commit.
      expect((await upsert(writer, `lag-${randomUUID()}@example.com`)).status).toBe(200);
      t.clock.advance(MAX_LAG_MS + 5_000);
      await until('reads go to the primary as lagging', read, (d) => d.lagging === 1 && d.primary === 1);
      const { samples } = await scrapeMetrics(t.origin);
      expect(sampleValue(samples, 'leadwire_db_replica_lag_seconds', { replica: 'replica1' })).toBeGreaterThan(MAX_LAG_MS / 1000);
      expect(sampleValue(samples, 'leadwire_db_replica_up', { replica: 'replica1' })).toBe(1);
      // Probed since the clock moved: the lag measured, not a stale probe, keeps it out.
      expect((await served(read)).delta).toMatchObject({ replica: 0, primary: 1, lagging: 1 });
    } finally {
      await pair.standby.resumeReplay();
    }
    // The clock stays where it is (time does not go back): caught up, the standby's lag is 0 again however late it is.
    await until('reads return to the standby', read, (d) => d.replica === 1);
  });

  it('answers every read while the standby is stopped (the first one sent to it, again by the primary), and returns to it once it is started', async () => {
    await until('the standby serves', read, (d) => d.replica === 1);
    // No probe runs while the clock stands still: the set still holds the standby well when the next read is sent to it.
    t.clock.freeze();
    try {
      // A probe already under way could still see the stop: it is let finish first.
      await t.runtime.deps.replicas!.probe();
      await pair.standby.stop();
      const first = await served(read);
      expect(first.value.status).toBe(200);
      expect(first.delta).toMatchObject({ replica: 0, primary: 1, read_failed: 1 });
      // That failure took it out at once; the probes, running again, keep it out.
      t.clock.unfreeze();
      await until('the standby is known down', read, (d) => d.down === 1 && d.primary === 1);
      const { samples } = await scrapeMetrics(t.origin);
      expect(sampleValue(samples, 'leadwire_db_replica_up', { replica: 'replica1' })).toBe(0);
    } finally {
      t.clock.unfreeze();
      await pair.standby.start();
    }
    await until('reads return to the standby', read, (d) => d.replica === 1);
  });
});
