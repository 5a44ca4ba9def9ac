/**
 * The read side of the /v1 client against a real server: listings that page for the caller one page at a time,
 * resume exactly from a saved cursor (at a page's end or in its middle), survive a 429 or a 5xx in the middle, and the
 * changes feed's iterator that stops once caught up and continues from its cursor.
 */
import { randomUUID } from 'node:crypto';
import { hashKey } from '@leadwire/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshMinute, windowStart } from '../../test/support/bursts.ts';
import { horizonPast } from '../../test/events/feed-support.ts';
import { initTestApp, type TestApp } from '../../test/support/app.ts';
import { createClient, type LeadwireClient, LeadwireError } from '../src/index.ts';
import { recordingFetch, startFlakyServer } from './client-support.ts';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await initTestApp();
  base = `${t.origin}/api`;
});
afterAll(async () => t?.close());

type Org = Awaited<ReturnType<TestApp['newOrg']>>;

/**
 * Waits until the feed can read every event of the organization: its horizon is the oldest transaction running on the
 * whole cluster, which other test files share.
 */
async function settled(orgId: string): Promise<void> {
  const [last] = await t.sql<{ txid: string }>(
    'select txid::text from outbox_events where organization_id = ? order by txid desc limit 1',
    [orgId],
  );
  if (last) await horizonPast(t, last.txid);
}

/** A new organization holding `n` contacts made through the API (so also n contact.created events); their emails. */
async function orgWith(n: number): Promise<{ org: Org; lw: LeadwireClient; emails: string[] }> {
  const org = await t.newOrg();
  const lw = createClient({ baseUrl: base, apiKey: org.publicKey });
  const emails = Array.from({ length: n }, (_, i) => `read-${i}-${randomUUID().slice(0, 8)}@example.com`);
  for (const email of emails) await lw.contacts.upsert({ email, tags: ['sync'] });
  await settled(org.orgId);
  return { org, lw, emails };
}

const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

const recordingSleep = (onSleep: (ms: number) => void = () => {}) => {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void (delays.push(ms), onSleep(ms)) };
};

describe('contacts.list and companies.list', () => {
  it('pages across many pages in (updatedAt, id) order, asking for the next page only once the loop wants it', async () => {
    const { org, emails } = await orgWith(23);
    const rec = recordingFetch();
    const lw = createClient({ baseUrl: base, apiKey: org.publicKey, fetch: rec.fetch });
    const seen: string[] = [];
    const requestsWhenSeen: number[] = [];
    for await (const c of lw.contacts.list({ limit: 5 })) {
      seen.push(c.email!);
      requestsWhenSeen.push(rec.exchanges.length);
    }
    expect(seen).toEqual(emails);
    // Item i (from 0) arrives with page floor(i / 5) + 1 fetched, and not one request more: nothing is read ahead.
    expect(requestsWhenSeen).toEqual(seen.map((_, i) => Math.floor(i / 5) + 1));
    expect(rec.exchanges).toHaveLength(5);
    expect(rec.exchanges.map((x) => new URL(x.url).searchParams.get('limit'))).toEqual(['5', '5', '5', '5', '5']);
    expect(rec.stats.maxInFlight).toBe(1);
    // The default page is the server's maximum.
    await collect(lw.contacts.list());
    expect(new URL(rec.exchanges.at(-1)!.url).searchParams.get('limit')).toBe('100');
  });

  it('resumes from a cursor saved in the middle of a page, at a page end, and after the last item: exactly the rest', async () => {
    const { lw, emails } = await orgWith(12);
    for (const stopAfter of [3, 5, 12]) {
      const first = lw.contacts.list({ limit: 5 });
      const got: string[] = [];
      for await (const c of first) {
        got.push(c.email!);
        if (got.length === stopAfter) break;
      }
      const saved = first.cursor!;
      expect(saved).toEqual(expect.any(String));
      // "Restart": a new listing from the saved string, nothing else carried over.
      const rest = (await collect(lw.contacts.list({ limit: 5, cursor: saved }))).map((c) => c.email!);
      expect([...got, ...rest]).toEqual(emails);
    }
    // A contact changed after the cursor was saved is listed again, later: a change is never missed.
    const listing = lw.contacts.list({ limit: 5 });
    for await (const c of listing) if (c.email === emails[6]) break;
    await lw.contacts.upsert({ email: emails[2]!, firstName: 'Changed' });
    const after = await collect(lw.contacts.list({ limit: 5, cursor: listing.cursor }));
    expect(after.map((c) => c.email)).toEqual([...emails.slice(7), emails[2]]);
    expect(after.at(-1)!.firstName).toBe('Changed');
  });

  it('pages() yields whole pages with nextCursor (null at the end); the listing’s cursor after a page resumes after it', async () => {
    const { lw, emails } = await orgWith(7);
    const listing = lw.contacts.list({ limit: 3 });
    const pages: { n: number; next: string | null }[] = [];
    for await (const page of listing.pages()) {
      pages.push({ n: page.items.length, next: page.nextCursor });
      if (pages.length === 2) break;
    }
    expect(pages).toEqual([
      { n: 3, next: expect.any(String) },
      { n: 3, next: expect.any(String) },
    ]);
    expect(listing.cursor).toBe(pages[1]!.next);
    const last = await collect(lw.contacts.list({ limit: 3, cursor: listing.cursor }).pages());
    expect(last).toEqual([{ items: [expect.objectContaining({ email: emails[6] })], nextCursor: null }]);
  });

  it('filters on updatedSince (inclusive), and the companies list pages the same way', async () => {
    const { lw, emails } = await orgWith(4);
    const all = await collect(lw.contacts.list());
    const since = all[2]!.updatedAt;
    expect((await collect(lw.contacts.list({ updatedSince: since }))).map((c) => c.email)).toEqual(emails.slice(2));

    const domains = Array.from({ length: 5 }, () => `co-${randomUUID().slice(0, 8)}.example`);
    for (const domain of domains) await lw.companies.upsert({ domain, name: domain });
    const companies = await collect(lw.companies.list({ limit: 2 }));
    expect(companies.map((c) => c.domain)).toEqual(domains);
  });

  it('retries a 502 and a real 429 in the middle of a listing: every item once, in order', async () => {
    const { org, emails } = await orgWith(9);
    // The third request (the second page) meets a proxy's 502 twice.
    const flaky = await startFlakyServer(base, (n) => (n === 1 || n === 2 ? 'bad-gateway' : 'pass'));
    try {
      const { delays, sleep } = recordingSleep();
      const lw = createClient({ baseUrl: flaky.baseUrl, apiKey: org.publicKey, sleep });
      expect((await collect(lw.contacts.list({ limit: 4 }))).map((c) => c.email)).toEqual(emails);
      expect(flaky.requests()).toBe(5);
      expect(delays).toHaveLength(2);
    } finally {
      await flaky.close();
    }

    const key = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'sync', type: 'public', permissions: ['contacts:read'] });
    freshMinute(t.clock);
    const rec = recordingFetch();
    // The server's clock moves by each wait instead of the test waiting.
    const { delays, sleep } = recordingSleep((ms) => t.clock.advance(ms));
    const lw = createClient({ baseUrl: base, apiKey: key, fetch: rec.fetch, sleep });
    const got: string[] = [];
    for await (const c of lw.contacts.list({ limit: 4 })) {
      got.push(c.email!);
      if (got.length === 4) {
        // The key's 600 requests of this minute are spent now, between two pages.
        await t.sql(
          `insert into rate_limit_counters (bucket, window_start, count) select 'key:' || id, ?, 600 from api_keys where key_hash = ?
           on conflict (bucket, window_start) do update set count = 600`,
          [windowStart(t.clock, 'minute'), hashKey(key)],
        );
      }
    }
    expect(got).toEqual(emails);
    expect(rec.exchanges.map((x) => x.status)).toEqual([200, 429, 200, 200]);
    expect(delays).toEqual([Number(rec.exchanges[1]!.retryAfter) * 1000]);
  });

  it('stops at the caller’s signal, and surfaces the API’s refusals as LeadwireError', async () => {
    const { org, lw } = await orgWith(3);
    const ctrl = new AbortController();
    const stopped = (async () => {
      for await (const _ of createClient({ baseUrl: base, apiKey: org.publicKey }).contacts.list({ limit: 1, signal: ctrl.signal })) {
        ctrl.abort(new Error('enough'));
      }
    })();
    await expect(stopped).rejects.toThrow('enough');

    const writeOnly = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'w', type: 'public', permissions: ['contacts:write'] });
    const denied = createClient({ baseUrl: base, apiKey: writeOnly });
    await expect(collect(denied.contacts.list())).rejects.toMatchObject({
      status: 403,
      code: 'insufficient_scope',
      required: 'contacts:read',
    });
    await expect(collect(denied.companies.list())).rejects.toMatchObject({ status: 403, required: 'companies:read' });
    const err = await collect(lw.contacts.list({ cursor: 'not-a-cursor' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeadwireError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_cursor' });
  });
});

describe('contacts.get, companies.get and companies.search', () => {
  it('return the records the listing holds; 404 not_found otherwise', async () => {
    const { lw } = await orgWith(1);
    const [listed] = await collect(lw.contacts.list());
    // The read adds the contact's consent by purpose, which pages leave out (none asked here).
    expect(await lw.contacts.get(listed!.id)).toEqual({ ...listed, consent: {} });
    await expect(lw.contacts.get(randomUUID())).rejects.toMatchObject({ status: 404, code: 'not_found' });
    // The id stays inside its path segment.
    await expect(lw.contacts.get('../search?email=x')).rejects.toMatchObject({ status: 400 });

    const domain = `find-${randomUUID().slice(0, 8)}.example`;
    const { id } = await lw.companies.upsert({ domain, name: 'Findable' });
    const found = await lw.companies.search({ domain: `https://www.${domain.toUpperCase()}/about` });
    expect(found).toMatchObject({ id, domain, name: 'Findable' });
    expect(await lw.companies.get(id)).toEqual(found);
    await expect(lw.companies.search({ domain: `nowhere-${randomUUID()}.example` })).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });
});

describe('events.list (the changes feed)', () => {
  it('yields every event in commit order across pages and stops once caught up; its cursor continues with what comes next', async () => {
    const { org, lw, emails } = await orgWith(7);
    const feed = lw.events.list({ limit: 3 });
    const events = await collect(feed);
    expect(events.map((e) => e.event)).toEqual(emails.map(() => 'contact.created'));
    expect(events.map((e) => (e.event === 'contact.created' ? e.data.contact.email : null))).toEqual(emails);
    expect(new Set(events.map((e) => e.id)).size).toBe(7);

    const more = [`late-${randomUUID()}@example.com`, `later-${randomUUID()}@example.com`];
    for (const email of more) await lw.contacts.upsert({ email });
    await settled(org.orgId);
    const next = lw.events.list({ after: feed.cursor, limit: 3 });
    const fresh = await collect(next);
    expect(fresh.map((e) => (e.event === 'contact.created' ? e.data.contact.email : null))).toEqual(more);
    // Caught up: nothing more, and the cursor stays usable.
    expect(await collect(lw.events.list({ after: next.cursor }))).toEqual([]);
  });

  it('resumes from a cursor saved after any event, in a page’s middle or at its end: none repeated, none skipped', async () => {
    const { lw } = await orgWith(8);
    const all = (await collect(lw.events.list({ limit: 3 }))).map((e) => e.id);
    for (const stopAfter of [1, 3, 4, 8]) {
      const feed = lw.events.list({ limit: 3 });
      const got: string[] = [];
      for await (const e of feed) {
        got.push(e.id);
        if (got.length === stopAfter) break;
      }
      const rest = (await collect(lw.events.list({ after: feed.cursor, limit: 3 }))).map((e) => e.id);
      expect([...got, ...rest]).toEqual(all);
    }
  });

  it('after: now skips what happened before; types filters; a contacts:read key reads the contact events only', async () => {
    const { org, lw } = await orgWith(2);
    const tail = lw.events.list({ after: 'now' });
    expect(await collect(tail)).toEqual([]);
    expect(tail.cursor).not.toBe('now');
    const email = `now-${randomUUID()}@example.com`;
    await lw.contacts.upsert({ email });
    await lw.contacts.upsert({ email, firstName: 'Renamed' });
    await settled(org.orgId);
    const pages = await collect(lw.events.list({ after: tail.cursor, types: ['contact.updated'] }).pages());
    expect(pages.flatMap((p) => p.items.map((e) => e.event))).toEqual(['contact.updated']);
    expect(pages.at(-1)!.hasMore).toBe(false);

    const reader = await t.newKey({ orgId: org.orgId, userId: org.userId, name: 'c', type: 'public', permissions: ['contacts:read'] });
    const c = createClient({ baseUrl: base, apiKey: reader });
    expect((await collect(c.events.list())).every((e) => e.event.startsWith('contact.'))).toBe(true);
    await expect(collect(c.events.list({ types: ['deal.won'] }))).rejects.toMatchObject({
      status: 403,
      code: 'insufficient_scope',
      required: 'events:read',
    });
    await expect(collect(lw.events.list({ after: 'bm90LWEtY3Vyc29y' }))).rejects.toMatchObject({ status: 400, code: 'invalid_cursor' });
  });

  it('types every item as the webhook union', () => {
    // Never run: typecheck refuses these, so the feed's types cannot drift from the webhooks'.
    const typeOnly = async (c: LeadwireClient) => {
      // @ts-expect-error not an event of the catalogue
      c.events.list({ types: ['contact.exploded'] });
      for await (const e of c.events.list()) {
        if (e.event === 'deal.won') void e.data.deal.id;
        // @ts-expect-error a contact event has no deal
        if (e.event === 'contact.created') void e.data.deal;
      }
    };
    expect(typeof typeOnly).toBe('function');
  });
});
