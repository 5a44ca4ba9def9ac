/**
 * Issue 19 section 4, fewer index writes per write: the trash's index (contacts_org_deleted_idx) holds only trashed
 * contacts, so creating or changing a live contact writes nothing to it; the trash list and the nightly purge still
 * read their rows through it. Checked in the WAL itself (pg_walinspect) and on the generic plans a server runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, initTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let slot: string;
beforeAll(async () => {
  t = await initTestApp();
  await t.sql('create extension if not exists pg_walinspect');
  // The other files of the run write WAL fast enough for a checkpoint to recycle the segments this file reads ("requested
  // WAL segment … has already been removed"): a physical slot, reserving from now, keeps them until the file ends.
  const [created] = await t.sql<{ slot: string }>(
    `select slot_name::text as slot from pg_create_physical_replication_slot('wal_' || current_database(), true)`,
  );
  slot = created!.slot;
});
afterAll(async () => {
  if (slot) await t.sql('select pg_drop_replication_slot($1)', [slot]);
  await t?.close();
});

const lsn = async () => (await t.sql<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn'))[0]!.lsn;

/**
 * pg_walinspect reads only WAL that is on disk. Tests run with synchronous_commit off, so a commit does not wait for
 * its flush: the WAL writer makes it within a few of its 200 ms rounds, which is what this waits for.
 */
async function flushedTo(target: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [r] = await t.sql<{ done: boolean }>('select pg_current_wal_flush_lsn() >= $1::pg_lsn as done', [target]);
    if (r?.done) return;
    if (Date.now() > deadline) throw new Error(`WAL not flushed to ${target} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Blocks of each named relation of this database that the WAL between `from` and `to` touched. */
async function blocksTouched(from: string, to: string, relations: string[]): Promise<Record<string, number>> {
  await flushedTo(to);
  const rows = await t.sql<{ relname: string; n: number }>(
    `select c.relname, count(*)::int as n
     from pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn) b join pg_class c on c.relfilenode = b.relfilenode
     where b.reldatabase = (select oid from pg_database where datname = current_database()) and c.relname = any($3::text[])
     group by c.relname`,
    [from, to, relations],
  );
  return Object.fromEntries(relations.map((r) => [r, rows.find((x) => x.relname === r)?.n ?? 0]));
}

describe("the trash's index", () => {
  it('is partial: trashed contacts only', async () => {
    const [idx] = await t.sql<{ indexdef: string }>(`select indexdef from pg_indexes where indexname = 'contacts_org_deleted_idx'`);
    expect(idx?.indexdef).toMatch(/\(organization_id, deleted_at\) WHERE \(deleted_at IS NOT NULL\)$/);
  });

  it('is not written when a live contact is created or changed, and is when one goes to trash', async () => {
    const org = await t.newOrg();
    const upsert = (email: string, firstName: string) =>
      call(t, 'POST', '/contacts/upsert', { key: org.publicKey, body: { email, firstName } });
    const relations = ['contacts', 'contacts_pkey', 'contacts_org_deleted_idx'];

    const from = await lsn();
    for (const n of [1, 2, 3]) expect((await upsert(`trash-idx-${n}@example.com`, 'Ada')).status).toBe(200);
    const changed = await upsert('trash-idx-1@example.com', 'Grace');
    expect(changed.status).toBe(200);
    const written = await blocksTouched(from, await lsn(), relations);
    // The contacts and their key are in the WAL (the reading works); the trash's index is not.
    expect(written.contacts).toBeGreaterThanOrEqual(4);
    expect(written.contacts_pkey).toBeGreaterThanOrEqual(3);
    expect(written.contacts_org_deleted_idx).toBe(0);

    const trashFrom = await lsn();
    // The statement the application's delete runs (contacts/app/sql.ts): the contact goes to trash.
    await t.sql('update contacts set deleted_at = $1, updated_at = $1 where id = $2', [t.clock.now(), changed.body.id]);
    expect((await blocksTouched(trashFrom, await lsn(), relations)).contacts_org_deleted_idx).toBeGreaterThanOrEqual(1);
  });

  it('serves the trash list and the purge on the generic plans', async () => {
    // Enough rows that an index beats reading the table: 20,000 live contacts and 200 in trash.
    const org = await t.newOrg({ plan: 'max' });
    await t.sql(
      `insert into contacts (organization_id, email, tags, source, lead_score, deleted_at)
       select $1, 'plan' || g || '@trash.example', '{}', 'api', 0, case when g % 100 = 0 then now() - make_interval(days => g % 40) end
       from generate_series(1, 20000) g`,
      [org.orgId],
    );
    await t.sql('analyze contacts');
    const plan = async (sql: string, types: string, params: string) => {
      await t.sql(`prepare trash_plan (${types}) as ${sql}`);
      try {
        await t.sql(`set plan_cache_mode = force_generic_plan`);
        const rows = await t.sql<{ 'QUERY PLAN': string }>(`explain execute trash_plan (${params})`);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await t.sql('deallocate trash_plan');
        await t.sql('reset plan_cache_mode');
      }
    };
    const list = await plan(
      'select id from contacts where organization_id = $1 and deleted_at is not null order by deleted_at desc, id desc limit 50',
      'uuid',
      `'00000000-0000-0000-0000-000000000000'`,
    );
    expect(list).toMatch(/contacts_org_deleted_idx/);
    const purge = await plan('select id from contacts where deleted_at < $1 order by deleted_at limit 500', 'timestamptz', 'now()');
    expect(purge).toMatch(/contacts_org_deleted_idx/);
  });
});
