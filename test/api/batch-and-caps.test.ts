import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await initTestApp();
});
afterAll(async () => t?.close());

describe('POST /v1/contacts/batch-upsert', () => {
  it('applies the single-upsert rules per row and reports each row; a bad row never fails the rest', async () => {
    const { publicKey: key, orgId } = await t.newOrg();
    await call(t, 'POST', '/companies/upsert', { key, body: { domain: 'batch.com' } });
    const existing = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'old@batch.com', tags: ['a'] } });
    const r = await call(t, 'POST', '/contacts/batch-upsert', {
      key,
      headers: { 'x-source': 'import-tool' },
      body: {
        contacts: [
          { email: 'new@batch.com', firstName: 'New' },
          { email: 'OLD@batch.com', tags: ['b'] },
          { email: 'not-an-email' },
          { firstName: 'No', lastName: 'Identity' },
          { email: 'x@batch.com', companyDomain: 'unknown.com' },
          { companyDomain: 'batch.com', firstName: 'Name', lastName: 'Only' },
          { email: 'new@batch.com', lastName: 'Twice' },
          'not an object',
        ],
      },
    });
    expect(r.status).toBe(200);
    const res = r.body.results;
    expect(res.map((x: any) => x.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(res[0]).toMatchObject({ ok: true, created: true, matchedBy: null });
    expect(res[1]).toEqual({ index: 1, ok: true, id: existing.body.id, created: false, matchedBy: 'email' });
    expect(res[2]).toMatchObject({ ok: false, error: { code: 'validation_failed', issues: [{ path: 'email' }] } });
    expect(res[3]).toMatchObject({ ok: false, error: { code: 'missing_identity' } });
    expect(res[4]).toMatchObject({ ok: false, error: { code: 'company_not_found' } });
    expect(res[5]).toMatchObject({ ok: true, created: true });
    expect(res[6]).toEqual({ index: 6, ok: true, id: res[0].id, created: false, matchedBy: 'email' });
    expect(res[7]).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    expect(r.body).toMatchObject({ created: 2, updated: 2, failed: 4 });
    const [row] = await t.sql<any>('select first_name, last_name, source from contacts where id = ?', [res[0].id]);
    expect(row).toEqual({ first_name: 'New', last_name: 'Twice', source: 'import-tool' });
    const [old] = await t.sql<any>('select tags from contacts where id = ?', [existing.body.id]);
    expect(old.tags).toEqual(['a', 'b']);
    const events = await t.sql<any>(`select event from outbox_events where organization_id = ? order by created_at`, [orgId]);
    expect(events.filter((e) => e.event === 'contact.created')).toHaveLength(3);
  });

  it('accepts 100 rows and refuses 101 or none with a clear 400', async () => {
    const { publicKey: key } = await t.newOrg();
    const rows = (k: number) => Array.from({ length: k }, (_, i) => ({ email: `b${i}@bulk.com` }));
    const ok = await call(t, 'POST', '/contacts/batch-upsert', { key, body: { contacts: rows(100) } });
    expect(ok.status).toBe(200);
    expect(ok.body.created).toBe(100);
    const again = await call(t, 'POST', '/contacts/batch-upsert', { key, body: { contacts: rows(100) } });
    expect(again.body).toMatchObject({ created: 0, updated: 100, failed: 0 });
    for (const contacts of [rows(101), []]) {
      const bad = await call(t, 'POST', '/contacts/batch-upsert', { key, body: { contacts } });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'validation_failed', issues: [{ path: 'contacts' }] });
    }
  });
});

describe('plan contact caps', () => {
  it.each([
    ['starter', 10_000],
    ['pro', 25_000],
    ['max', 100_000],
  ] as const)('%s refuses new contacts beyond %i (plus booster) but still updates existing ones', async (plan, cap) => {
    const { publicKey: key, orgId } = await t.newOrg({ plan });
    await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'existing@cap.com' } });
    // Pretend the organization is one short of its cap rather than inserting thousands of rows.
    await t.sql('update contact_counters set contact_count = ? where organization_id = ?', [cap - 1, orgId]);
    expect((await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'last@cap.com' } })).status).toBe(200);
    const refused = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'over@cap.com' } });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ code: 'contact_limit_reached', error: 'Contact limit reached' });
    expect(await t.sql('select id from contacts where email = ? and organization_id = ?', ['over@cap.com', orgId])).toHaveLength(0);
    const update = await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'existing@cap.com', phone: '1' } });
    expect(update.body).toMatchObject({ created: false });
    const lead = await call(t, 'POST', '/leads', { key, body: { email: 'lead-over@cap.com' } });
    expect(lead.body.code).toBe('contact_limit_reached');
    await t.sql('update organizations set contact_booster = 1 where id = ?', [orgId]);
    expect((await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'over@cap.com' } })).status).toBe(200);
  });

  it('a batch admits rows up to the cap and reports the rest', async () => {
    const { publicKey: key, orgId } = await t.newOrg();
    await t.sql('update contact_counters set contact_count = 9998 where organization_id = ?', [orgId]);
    const r = await call(t, 'POST', '/contacts/batch-upsert', {
      key,
      body: { contacts: [{ email: 'c1@x.com' }, { email: 'c2@x.com' }, { email: 'c3@x.com' }] },
    });
    expect(r.body.results.map((x: any) => x.ok)).toEqual([true, true, false]);
    expect(r.body.results[2].error).toEqual({ code: 'contact_limit_reached', error: 'Contact limit reached' });
    const [org] = await t.sql<any>('select contact_count from contact_counters where organization_id = ?', [orgId]);
    expect(org.contact_count).toBe(10_000);
  });
});

describe('the counter bump after commit', () => {
  it('does not starve a small pool: many concurrent new contacts on 2 connections all complete', async () => {
    const small = await initTestApp({ DB_POOL_MAX: '2' });
    try {
      const { publicKey: key, orgId } = await small.newOrg({ plan: 'max' });
      const rs = await Promise.all(
        Array.from({ length: 20 }, (_, i) => call(small, 'POST', '/contacts/upsert', { key, body: { email: `pool${i}@x.com` } })),
      );
      expect(rs.map((r) => r.status)).toEqual(Array(20).fill(200));
      const [org] = await small.sql<any>('select contact_count from contact_counters where organization_id = ?', [orgId]);
      expect(org.contact_count).toBe(20);
    } finally {
      await small.close();
    }
  });

  it('counts a contact once however many simultaneous upserts race to create its email, and never counts an update', async () => {
    const { publicKey: key, orgId } = await t.newOrg({ plan: 'max' });
    const send = (email: string) => call(t, 'POST', '/contacts/upsert', { key, body: { email, tags: [email] } });
    const rs = await Promise.all([
      ...Array.from({ length: 30 }, () => send('same@x.com')),
      ...Array.from({ length: 10 }, (_, i) => send(`other${i}@x.com`)),
    ]);
    expect(rs.map((r) => r.status)).toEqual(Array(40).fill(200));
    expect(rs.filter((r) => r.body.created)).toHaveLength(11);
    await send('same@x.com');
    const [org] = await t.sql<any>('select contact_count from contact_counters where organization_id = ?', [orgId]);
    const [stored] = await t.sql<any>('select count(*)::int as n from contacts where organization_id = ?', [orgId]);
    expect(stored.n).toBe(11);
    expect(org.contact_count).toBe(11);
  });

  it("leaves the organization's row as it was: new contacts bump a counter row of its own", async () => {
    // On the organization row, each bump beside the foreign-key checks (for key share) of other inserts became a
    // MultiXact under load; the row's version (xmin) shows whether anything wrote it.
    const { publicKey: key, orgId } = await t.newOrg({ plan: 'max' });
    const version = async () => (await t.sql<{ v: string }>('select xmin::text as v from organizations where id = ?', [orgId]))[0]!.v;
    const before = await version();
    await call(t, 'POST', '/contacts/upsert', { key, body: { email: 'row1@x.com' } });
    await call(t, 'POST', '/contacts/batch-upsert', { key, body: { contacts: [{ email: 'row2@x.com' }, { email: 'row3@x.com' }] } });
    expect(await version()).toBe(before);
    const [org] = await t.sql<any>('select contact_count from contact_counters where organization_id = ?', [orgId]);
    expect(org.contact_count).toBe(3);
  });
});
