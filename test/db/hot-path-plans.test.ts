import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Operation, openWorkspace, operations, plansOf, type Workspace } from '../bench/scale-measure.ts';
import { seedScale } from '../bench/scale-seed.ts';
import { initTestApp, type TestApp } from '../support/app.ts';

/**
 * Every hot operation `npm run bench:scale` measures (the upserts, a search, a feed page, a timeline page, a tracking
 * collect, a dispatch round), through the real services, in a database where one organization holds most of a history
 * of contacts, companies, events, page views, known visitors and delivered webhooks, among small ones (seeded by the
 * bench's own seeder, at a size that fits npm test). On the generic plans a long-running server uses, no statement may
 * read a growing table whole or walk more rows of it than one call names: the large organization must pay per call
 * what a small one pays.
 */

const SIZES = { organizations: 21, contacts: 12_000, events: 30_000, pageViews: 15_000, deliveries: 8_000, largeShare: 0.75 };
/** Far below the large organization's size, above what one call names (a batch of 100, a dispatch round of 500). */
const TOUCH_LIMIT = 2_000;

let t: TestApp;
let pool: pg.Pool;
let w: Workspace;
let ops: Operation[];

beforeAll(async () => {
  t = await initTestApp();
  pool = new pg.Pool({ connectionString: t.runtime.deps.config.DATABASE_URL, max: 2 });
  w = await openWorkspace(t.runtime.deps.db, pool, 100);
  const seeded = await seedScale(pool, { largeOrgId: w.orgId, largeFirst: 100 }, SIZES, () => {});
  w = { ...w, contacts: seeded.largeContacts };
  ops = await operations(pool, w, 'plans');
}, 120_000);
afterAll(async () => {
  await pool?.end();
  await t?.close();
});

describe('hot operations in a database where one organization holds most of the history', () => {
  it('the large organization is large: far more rows than a call may touch', async () => {
    const [row] = await t.sql<{ contacts: number; events: number; views: number }>(
      `select (select count(*)::int from contacts where organization_id = ?) as contacts,
              (select count(*)::int from outbox_events where organization_id = ?) as events,
              (select count(*)::int from page_views where organization_id = ?) as views`,
      [w.orgId, w.orgId, w.orgId],
    );
    expect(row!.contacts).toBeGreaterThan(4 * TOUCH_LIMIT);
    expect(row!.events).toBeGreaterThan(10 * TOUCH_LIMIT);
    expect(row!.views).toBeGreaterThan(5 * TOUCH_LIMIT);
  });

  // In order: the writes leave the pending events the dispatch round then claims.
  it.each([0, 1, 2, 3, 4, 5, 6])('operation %i: no statement reads a growing table whole or walks it', async (i) => {
    const op = ops[i]!;
    const statements = await plansOf(t.runtime.deps.db, op, 1);
    expect(statements.length, op.name).toBeGreaterThan(0);
    const bad = statements.filter((s) => s.seqScans.length > 0 || s.rowsTouched >= TOUCH_LIMIT);
    expect(
      bad.map((s) => ({ op: op.name, statement: s.key, seqScans: s.seqScans, rowsTouched: s.rowsTouched })),
      op.name,
    ).toEqual([]);
  });
});
