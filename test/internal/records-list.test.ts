import { randomUUID } from 'node:crypto';
import { qb, statement } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newestFirst, type PageParams } from '../../packages/core/src/records/pagination.ts';
import { call, initTestApp, type TestApp } from '../support/app.ts';
import { internalClient } from '../support/internal.ts';

/*
 * The list of every CRM record type runs through one keyset helper (records/pagination.ts, records/query.ts); these
 * hold each type to its contract: pages of `limit` walk every record once in the order of one big page, and a cursor
 * that is not a record of this list in the caller's organization is refused (400 invalid_cursor), revealing nothing.
 */

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

async function org() {
  const o = await t.newOrg({ plan: 'max' });
  const c = await call(t, 'POST', '/contacts/upsert', { key: o.publicKey, body: { email: `c-${randomUUID()}@example.com` } });
  return { client: internalClient(t, o.internalKey), contactId: c.body.id as string };
}
type Client = Awaited<ReturnType<typeof org>>['client'];
interface Page {
  items: { id: string }[];
  nextCursor: string | null;
}

/** A record type: how to make one, and its list. */
interface Kind {
  make: (c: Client, contactId: string, i: number) => Promise<{ id: string }>;
  list: (c: Client, q: { limit: number; cursor?: string }) => Promise<Page>;
}
const kinds: Record<string, Kind> = {
  deals: { make: (c, contactId, i) => c.deals.create.mutate({ contactId, title: `d${i}` }), list: (c, q) => c.deals.list.query(q) },
  tasks: { make: (c, contactId, i) => c.tasks.create.mutate({ contactId, title: `t${i}` }), list: (c, q) => c.tasks.list.query(q) },
  bookings: {
    make: (c, contactId, i) =>
      c.bookings.create.mutate({ contactId, startsAt: `2026-12-0${i + 1}T10:00:00Z`, endsAt: `2026-12-0${i + 1}T10:30:00Z` }),
    list: (c, q) => c.bookings.list.query(q),
  },
  aiActions: {
    make: (c, contactId, i) => c.aiActions.create.mutate({ contactId, kind: 'send_sms', summary: `s${i}` }),
    list: (c, q) => c.aiActions.list.query(q),
  },
};

describe('record lists', () => {
  for (const [name, kind] of Object.entries(kinds)) {
    it(`${name}: pages of one walk every record once; a foreign, unknown or other list's cursor is refused`, async () => {
      const [a, b] = [await org(), await org()];
      for (let i = 0; i < 3; i++) await kind.make(a.client, a.contactId, i);
      const foreign = await kind.make(b.client, b.contactId, 0);

      const all = await kind.list(a.client, { limit: 100 });
      expect(all.items).toHaveLength(3);
      expect(all.nextCursor).toBeNull();
      const walked: string[] = [];
      let cursor: string | undefined;
      for (let n = 0; n < 4; n++) {
        const page = await kind.list(a.client, { limit: 1, ...(cursor ? { cursor } : {}) });
        walked.push(...page.items.map((x) => x.id));
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      expect(walked).toEqual(all.items.map((x) => x.id));

      // Another organization's record, an id of nothing, and a record of the same organization from another list (its
      // contact): each read as "nothing after it" in SQL, so each is told apart and refused.
      for (const bad of [foreign.id, randomUUID(), a.contactId]) {
        const refused = await kind.list(a.client, { limit: 100, cursor: bad }).then(
          () => null,
          (e: { data?: { httpStatus?: number; body?: { code?: string } } }) => e.data,
        );
        expect(refused, bad).toMatchObject({ httpStatus: 400, body: { code: 'invalid_cursor' } });
      }
      // The last page's own cursor is still one of the list's: an empty page, not a refusal.
      const last = all.items.at(-1)!.id;
      expect(await kind.list(a.client, { limit: 100, cursor: last })).toEqual({ items: [], nextCursor: null });
    });
  }
});

// Never called: `tsc` (part of the checks) fails if the keyset helper stops holding its table to the query's alias.
export function typeChecks(p: PageParams) {
  const deals = qb.selectFrom('deals as d').select(['d.id']);
  statement()(() => newestFirst(deals, 'deals', 'd', p));
  // @ts-expect-error the alias d reads deals, not tasks
  statement()(() => newestFirst(deals, 'tasks', 'd', p));
  // @ts-expect-error no alias t in this query
  statement()(() => newestFirst(deals, 'tasks', 't', p));
  // @ts-expect-error a misspelt column
  qb.selectFrom('deals as d').select(['d.titel']);
}
