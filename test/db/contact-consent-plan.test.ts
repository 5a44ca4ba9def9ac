import { FIND_CONTACT } from '#core/contacts/v1/read.ts';
import { GET_LIVE_DETAIL } from '#core/contacts/app/sql.ts';
import type { Statement } from '@leadwire/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { genericPlanNodes } from '../support/plans.ts';

/**
 * The contact reads carry the contact's consent (consent/state.ts) from a subquery of their own statement: on the
 * generic plan a long-running server uses, it reaches the contact's entries through consent_entries_contact_idx and
 * reads only those, however many entries the organization holds.
 */

const CONTACTS = 5_000;
const ENTRIES_EACH = 4;

let t: TestApp;
let orgId: string;
let target: string;
beforeAll(async () => {
  t = await initTestApp();
  orgId = (await t.newOrg({ plan: 'max' })).orgId;
  await t.sql(
    `insert into contacts (organization_id, first_name, tags, source, lead_score) select ?, 'C' || g, '{}', 'api', 0 from generate_series(1, ?::int) g`,
    [orgId, CONTACTS],
  );
  await t.sql(
    `insert into consent_entries (organization_id, contact_id, purpose, status, method, version, created_at)
     select c.organization_id, c.id, case when g % 2 = 0 then 'email_marketing' else 'sms' end,
            case when g = 3 then 'withdrawn' else 'granted' end, 'single_opt_in', 'v' || g, now() - g * interval '1 day'
     from contacts c cross join generate_series(1, ?::int) g where c.organization_id = ?`,
    [ENTRIES_EACH, orgId],
  );
  await t.sql('analyze contacts');
  await t.sql('analyze consent_entries');
  [{ id: target }] = (await t.sql<{ id: string }>(`select id from contacts where organization_id = ? and first_name = 'C2500'`, [
    orgId,
  ])) as [{ id: string }];
}, 120_000);
afterAll(() => t?.close());

const genericPlan = <P>(stmt: Statement<P, unknown>, params: P) => genericPlanNodes(t.runtime.deps.db, stmt, params);

describe(`consent on the contact reads, among ${(CONTACTS * ENTRIES_EACH).toLocaleString('en')} entries`, () => {
  it.each([
    ['GET /v1/contacts/{id}', () => genericPlan(FIND_CONTACT, { orgId, id: target })],
    ['GET /api/contacts/{id}', () => genericPlan(GET_LIVE_DETAIL, { orgId, id: target })],
  ])('%s reads the contact’s own entries through consent_entries_contact_idx', async (_route, plan) => {
    const steps = await plan();
    // An index scan names both; a bitmap scan splits them (the heap scan names the table, its child the index).
    const onEntries = steps.filter((n) => n['Relation Name'] === 'consent_entries' || n['Index Name']?.startsWith('consent_entries'));
    expect(onEntries.map((n) => n['Node Type'])).not.toContain('Seq Scan');
    expect(onEntries.filter((n) => n['Index Name']).map((n) => n['Index Name'])).toEqual(['consent_entries_contact_idx']);
    for (const n of onEntries) expect((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0)).toBeLessThanOrEqual(ENTRIES_EACH);
  });
});
