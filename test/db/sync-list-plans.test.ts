import { LIST_NEWEST, LIST_SINCE } from '#core/companies/read.ts';
import { LIST_CONTACTS } from '#core/contacts/v1/read.ts';
import { encodeSyncCursor, startOf } from '#core/records/sync-page.ts';
import type { Statement } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { genericPlanNodes, inSlices, type PlanNode, withIndexesBuiltAfter } from '../support/plans.ts';

/**
 * The read side's lists in an organization of 100,000 contacts and 30,000 companies among small ones, on the generic
 * plans a long-running server uses: each page walks its index in the list's order from where the page starts, reads
 * its own rows and never sorts, wherever in the organization the page is.
 */

const BIG = 100_000;
/** Companies' plans are the same at any size past a few pages; fewer keep the file fast. */
const BIG_COMPANIES = 30_000;
const PAGE = 100;

let t: TestApp;
let bigOrg: string;
beforeAll(async () => {
  t = await initTestApp();
  bigOrg = (await t.newOrg({ plan: 'max' })).orgId;
  for (let i = 0; i < 10; i++) {
    const { orgId } = await t.newOrg();
    await t.sql(
      `insert into contacts (organization_id, email, tags, source, lead_score) select ?, 's' || g || '@small.example', '{}', 'api', 0 from generate_series(1, 20) g`,
      [orgId],
    );
    await t.sql(`insert into companies (organization_id, domain) select ?, 'co' || g || '.example' from generate_series(1, 5) g`, [orgId]);
  }
  const query = (text: string) => t.sql(text);
  // Changes spread over a year, a tenth of the contacts trashed.
  // In slices, each its own transaction (inSlices says why).
  await withIndexesBuiltAfter(query, 'contacts', () =>
    inSlices(BIG, 25_000, (from, to) =>
      t.sql(
        // No emails: the lists do not read them, and the live-email unique index would only slow the seeding.
        `insert into contacts (organization_id, first_name, tags, source, lead_score, updated_at, deleted_at)
       select ?, 'C' || g, '{}', 'api', 0, '2026-01-01Z'::timestamptz + g * interval '5 minutes',
              case when g % 10 = 0 then now() end
       from generate_series(?::int, ?::int) g`,
        [bigOrg, from, to],
      ),
    ),
  );
  await withIndexesBuiltAfter(query, 'companies', async () => {
    await t.sql(
      `insert into companies (organization_id, domain, created_at, updated_at)
       select ?, 'co' || g || '.big.example', '2025-01-01Z'::timestamptz + g * interval '1 minute', '2026-01-01Z'::timestamptz + g * interval '5 minutes'
       from generate_series(1, ?::int) g`,
      [bigOrg, BIG_COMPANIES],
    );
  });
  await t.sql('analyze contacts');
  await t.sql('analyze companies');
}, 120_000);
afterAll(() => t?.close());

const genericPlan = <P>(stmt: Statement<P, unknown>, params: P) => genericPlanNodes(t.runtime.deps.db, stmt, params);

/** Index entries and rows the plan went through on `index`. */
const touched = (plan: PlanNode[], index: string) =>
  plan
    .filter((n) => n['Index Name'] === index)
    .reduce((sum, n) => sum + (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1) + (n['Rows Removed by Filter'] ?? 0), 0);

function expectIndexWalk(plan: PlanNode[], index: string) {
  expect(plan.map((n) => n['Node Type'])).not.toContain('Sort');
  expect(plan.map((n) => n['Node Type'])).not.toContain('Seq Scan');
  expect(plan.some((n) => n['Index Name'] === index)).toBe(true);
  expect(touched(plan, index)).toBeLessThanOrEqual(PAGE + 1);
}

describe(`the read side's lists in an organization of ${BIG.toLocaleString('en')} contacts and ${BIG_COMPANIES.toLocaleString('en')} companies`, () => {
  /** Page starts: the first page, one from a cursor in the middle, one from updatedSince near the end. */
  const starts = [
    startOf({ limit: PAGE }, 'contacts'),
    startOf(
      { limit: PAGE, cursor: encodeSyncCursor('contacts', '2026-03-15T00:00:00.000000Z', '00000000-0000-4000-8000-000000000000') },
      'contacts',
    ),
    startOf({ limit: PAGE, updatedSince: '2026-12-20T00:00:00.000000Z' }, 'contacts'),
  ];

  it('GET /v1/contacts walks contacts_org_updated_live_idx, never sorts, and reads one page of rows', async () => {
    for (const start of starts) {
      expectIndexWalk(await genericPlan(LIST_CONTACTS, { orgId: bigOrg, ...start, limit: PAGE + 1 }), 'contacts_org_updated_live_idx');
    }
  });

  it('GET /v1/companies walks companies_org_updated_idx, never sorts, and reads one page of rows', async () => {
    for (const start of starts) {
      expectIndexWalk(await genericPlan(LIST_SINCE, { orgId: bigOrg, ...start, limit: PAGE + 1 }), 'companies_org_updated_idx');
    }
  });

  it('GET /api/companies walks companies_org_created_idx newest first, from the start or a cursor', async () => {
    const [{ id: middle } = { id: '' }] = await t.sql<{ id: string }>(`select id from companies where domain = 'co15000.big.example'`);
    for (const cursor of [null, middle]) {
      const plan = await genericPlan(LIST_NEWEST, { orgId: bigOrg, cursor, limit: PAGE + 1, pattern: null });
      expectIndexWalk(plan, 'companies_org_created_idx');
    }
  });
});
