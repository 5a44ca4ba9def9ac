import { authenticate } from '#core/auth/authenticate.ts';
import { batchUpsertContacts } from '#core/contacts/v1/batch.ts';
import { upsertContact } from '#core/contacts/v1/upsert.ts';
import { KeyGuard } from '#core/limits/key-guard.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTestApp, type TestApp } from '../support/app.ts';
import { type ExplainedStatement, explaining, inSlices, rowsTouched } from '../support/plans.ts';

/**
 * A long-running server executes its prepared statements with generic plans, planned for an average organization. In
 * a database of many small organizations and one large one, a plan that scans "the organization's contacts" looks
 * cheap and is linear in the large one's size on every write: the partners who send the most would pay the most per
 * row. Every statement the upsert paths run must touch the contacts it writes, not the organization's.
 */

const BIG_ORG_CONTACTS = 30_000;
/** Far below the large organization's size and far above what any one request names (a batch is 100 rows). */
const TOUCH_LIMIT = 1_000;

/** The rows of large tables each statement went through, by statement (the most over its runs). */
type Touched = Map<string, number>;

/** The tables whose rows grow with an organization. */
const LARGE = ['contacts', 'companies'];

const touching = (touched: Touched) => (s: ExplainedStatement) =>
  touched.set(s.key, Math.max(touched.get(s.key) ?? 0, rowsTouched(s.plan, LARGE)));

describe('upsert statements in a database with one large organization among many small ones', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await initTestApp();
    const big = await t.newOrg({ plan: 'max' });
    key = big.publicKey;
    for (let i = 0; i < 40; i++) {
      const { orgId } = await t.newOrg();
      await t.sql(
        `insert into contacts (organization_id, email, tags, source, lead_score) select ?, 's' || g || '@small.example', '{}', 'api', 0 from generate_series(1, 20) g`,
        [orgId],
      );
      await t.sql(`insert into companies (organization_id, domain) select ?, 'co' || g || '.example' from generate_series(1, 5) g`, [
        orgId,
      ]);
    }
    // In slices, each its own transaction (inSlices says why).
    await inSlices(BIG_ORG_CONTACTS, 10_000, (from, to) =>
      t.sql(
        `insert into contacts (organization_id, email, first_name, last_name, tags, source, lead_score)
         select ?, 'c' || g || '@big.example', 'Seed', 'Contact', '{seed}', 'api', 0 from generate_series(?::int, ?::int) g`,
        [big.orgId, from, to],
      ),
    );
    await t.sql(`insert into companies (organization_id, domain) select ?, 'co' || g || '.example' from generate_series(1, ?::int) g`, [
      big.orgId,
      BIG_ORG_CONTACTS / 5,
    ]);
    await t.sql('update contact_counters set contact_count = ? where organization_id = ?', [BIG_ORG_CONTACTS, big.orgId]);
    await t.sql('analyze');
  }, 60_000);
  afterAll(() => t?.close());

  it('touch the rows they name, not the organization: checked on the generic plans a running server uses', async () => {
    const touched: Touched = new Map();
    const db = explaining(t.runtime.deps.db, touching(touched));
    const now = t.clock.now();
    const { actor } = await authenticate(db, `Bearer ${key}`, 'public', { now, guard: new KeyGuard(), setHeader: () => {} });
    const opts = { eventSource: 'api' as const, now };
    const row = (email: string) => ({ email, firstName: 'Ada', lastName: 'Lovelace', tags: ['bench'], custom: { plan: 'trial' } });
    const updated = await upsertContact(db, actor, row('c7@big.example'), opts);
    const created = await upsertContact(db, actor, row('new-one@big.example'), opts);
    expect([updated.created, created.created]).toEqual([false, true]);
    const rows = Array.from({ length: 100 }, (_, i) => ({
      ...row(i % 2 ? `c${100 + i}@big.example` : `new-${i}@big.example`),
      ...(i % 10 === 0 ? { companyDomain: `co${i + 1}.example` } : {}),
    }));
    const batch = await batchUpsertContacts(db, actor, rows, opts);
    expect([batch.created, batch.updated, batch.failed]).toEqual([50, 50, 0]);

    expect(touched.size).toBeGreaterThanOrEqual(6);
    expect([...touched].filter(([, rows]) => rows >= TOUCH_LIMIT)).toEqual([]);
  });
});
