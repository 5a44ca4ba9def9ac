import type pg from 'pg';
import { EMAIL_DOMAIN, SEED_PREFIX } from './workload.ts';

/**
 * The history of `npm run bench:scale`, written by the database itself (generate_series, one statement per slice), so
 * that a million contacts and ten million events and page views take minutes, not the days the API would.
 */

export interface ScaleSizes {
  organizations: number;
  contacts: number;
  events: number;
  pageViews: number;
  /** The large organization's delivery log (one endpoint), kept as the events are. */
  deliveries: number;
  /** The large organization's share of each table; the rest is spread evenly over the others. */
  largeShare: number;
}

export function sizesAt(scale: number): ScaleSizes {
  const n = (full: number, least: number) => Math.max(least, Math.round(full * scale));
  return {
    organizations: n(1_000, 10),
    contacts: n(1_000_000, 2_000),
    events: n(10_000_000, 20_000),
    pageViews: n(10_000_000, 20_000),
    deliveries: n(1_000_000, 2_000),
    largeShare: 0.2,
  };
}

/** Rows per statement: big enough that a statement's own cost is nothing, small enough to show progress. */
const SLICE = 200_000;

/** A contact's id from its organization and number, so events, page views and visitors can name it without a join. */
const contactId = (org: string, n: string) => `md5('c:' || ${org} || ':' || ${n})::uuid`;

/** An event about contact `n` as the outbox stores it (a few hundred bytes, the contact's main fields). */
const eventPayload = (org: string, n: string, g: string) => `jsonb_build_object(
  'event', case when ${g} % 10 = 0 then 'contact.created' else 'contact.updated' end,
  'timestamp', now() - (${g} % 525600) * interval '1 minute', 'source', 'api',
  'data', jsonb_build_object('contact', jsonb_build_object('id', ${contactId(org, n)}::text,
    'email', '${SEED_PREFIX}' || ${n} || '@${EMAIL_DOMAIN}', 'firstName', 'Seed', 'lastName', 'Contact ' || ${n},
    'tags', jsonb_build_array('seed'), 'leadScore', 15, 'source', 'api',
    'custom', jsonb_build_object('campaign', 'c' || (${n} % 16), 'plan', 'trial'))))`;

/** Where a table's rows come from: `org` and `n` (the row's number in its organization) are SQL expressions. */
const INSERTS = {
  contacts: (
    org: string,
    n: string,
  ) => `insert into contacts (id, organization_id, email, first_name, last_name, tags, source, lead_score, created_at, updated_at)
    select ${contactId(org, n)}, ${org}, '${SEED_PREFIX}' || ${n} || '@${EMAIL_DOMAIN}', 'Seed', 'Contact ' || ${n}, '{seed}', 'api', 15,
           now() - (${n} % 525600) * interval '1 minute', now() - (${n} % 43200) * interval '1 minute'`,
  // Events name a contact of their organization; their transactions are spread below the current one, as old ones are.
  outbox_events: (
    org: string,
    n: string,
    contact: string,
  ) => `insert into outbox_events (id, organization_id, event, payload, created_at, txid)
    select gen_random_uuid(), ${org}, case when ${n} % 10 = 0 then 'contact.created' else 'contact.updated' end, ${eventPayload(org, contact, n)},
           now() - (${n} % 525600) * interval '1 minute', (1 + ${n}::bigint % ($cur::bigint - 2))::text::xid8`,
  // Half the views name a known contact; the others are an anonymous visitor's, five views each.
  page_views: (
    org: string,
    n: string,
    contact: string,
  ) => `insert into page_views (id, organization_id, contact_id, visitor_id, url, referrer, title, created_at)
    select gen_random_uuid(), ${org}, case when ${n} % 2 = 0 then ${contactId(org, contact)} end, 'anon-' || (${n} / 10),
           'https://site.example/p/' || (${n} % 500), case when ${n} % 3 = 0 then 'https://search.example/' end, 'Page ' || (${n} % 500),
           now() - (${n} % 525600) * interval '1 minute'`,
  companies: (org: string, n: string) => `insert into companies (organization_id, domain) select ${org}, 'co' || ${n} || '.example'`,
  // The delivery log of the organization's endpoints: sent long ago, one attempt each.
  webhook_deliveries: (
    org: string,
    n: string,
  ) => `insert into webhook_deliveries (organization_id, endpoint_id, event_id, event, body, state, attempts, created_at, updated_at)
    select ${org}, (select id from webhook_endpoints where organization_id = ${org} order by id limit 1), gen_random_uuid(), 'contact.updated',
           '{"event":"contact.updated","data":{}}', 'succeeded', 1, now() - (${n} % 43200) * interval '1 minute', now() - (${n} % 43200) * interval '1 minute'`,
  tracking_visitors: (org: string, n: string) => `insert into tracking_visitors (id, organization_id, visitor_id, contact_id)
    select gen_random_uuid(), ${org}, 'v-' || ${n}, ${contactId(org, n)}`,
};

type Table = keyof typeof INSERTS;

export interface SeedTarget {
  /** The large organization (already made, with `largeFirst` seed contacts of its own). */
  largeOrgId: string;
  largeFirst: number;
}

export interface SeedResult {
  sizes: ScaleSizes;
  /** Contacts the large organization holds after seeding (its seed emails are seedEmail(0 .. n-1)). */
  largeContacts: number;
  seconds: number;
}

/** The large organization's first contacts, before the empty-database measures: the same ids and emails seeding continues. */
export async function seedFirstContacts(pool: pg.Pool, orgId: string, count: number): Promise<void> {
  await pool.query(`${INSERTS.contacts('$1::uuid', 'g')} from generate_series(0, $2::int - 1) g`, [orgId, count]);
  await pool.query('update contact_counters set contact_count = $2 where organization_id = $1', [orgId, count]);
  await pool.query('analyze contacts');
}

const f0 = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * Seeds `sizes` into the database: the organizations, then each table, slice by slice, printing progress. The secondary
 * indexes of the big tables are dropped for the load and built again after it (minutes instead of an hour of random
 * b-tree inserts; the indexes come out packed, as a REINDEX leaves them), then everything is vacuumed and analyzed.
 * Triggers and foreign-key checks are skipped (replica role): the events are history, not news to dispatch.
 */
export async function seedScale(pool: pg.Pool, target: SeedTarget, sizes: ScaleSizes, log: (m: string) => void): Promise<SeedResult> {
  const started = performance.now();
  const client = await pool.connect();
  // A dropped connection (the run interrupted) fails the statement in flight; unhandled, it would crash the process.
  const onError = (err: Error) => log(`seeding connection: ${err.message}`);
  client.on('error', onError);
  try {
    await client.query(`set synchronous_commit = off`);
    await client.query(`set maintenance_work_mem = '256MB'`);
    await client.query('set session_replication_role = replica');
    const smallCount = sizes.organizations - 1;
    const { rows: small } = await client.query<{ id: string }>(
      `insert into organizations (name) select 'Scale ' || g from generate_series(1, $1::int) g returning id`,
      [smallCount],
    );
    const smallIds = small.map((r) => r.id);
    const [{ cur } = { cur: '3' }] = (await client.query<{ cur: string }>('select pg_current_xact_id()::text as cur')).rows;
    const large = (total: number) => Math.round(total * sizes.largeShare);
    const perSmall = (total: number) => Math.max(1, Math.floor((total - large(total)) / Math.max(1, smallCount)));
    const largeContacts = target.largeFirst + large(sizes.contacts);
    const smallContacts = perSmall(sizes.contacts);

    /** `big` rows for the large organization (numbered from `first`), `each` for every small one. */
    const fill = async (table: Table, big: number, each: number, first = 0) => {
      const total = big + each * smallIds.length;
      const t0 = performance.now();
      let done = 0;
      const progress = () => {
        const s = (performance.now() - t0) / 1000;
        const eta = done ? (s * (total - done)) / done : 0;
        log(
          `  ${table}: ${f0(done)} / ${f0(total)} (${Math.round((100 * done) / total)}%), ${Math.round(s)} s, about ${Math.round(eta)} s left`,
        );
      };
      const run = async (text: string, params: unknown[], rows: number) => {
        await client.query(text.replaceAll('$cur', `'${cur}'`), params);
        done += rows;
        progress();
      };
      const perContact = table === 'contacts' || table === 'tracking_visitors' || table === 'companies' || table === 'webhook_deliveries';
      // The large organization: its rows numbered from where it stands, in slices.
      for (let from = 0; from < big; from += SLICE) {
        const to = Math.min(big, from + SLICE);
        const n = `(${first} + g)`;
        const contact = `(g % ${largeContacts})`;
        const sqlText = perContact ? INSERTS[table]('$1::uuid', n) : INSERTS[table]('$1::uuid', n, contact);
        await run(`${sqlText} from generate_series($2::int, $3::int - 1) g`, [target.largeOrgId, from, to], to - from);
      }
      // The small ones: as many organizations per statement as make a slice.
      const orgsPerSlice = Math.max(1, Math.floor(SLICE / each));
      for (let i = 0; each > 0 && i < smallIds.length; i += orgsPerSlice) {
        const ids = smallIds.slice(i, i + orgsPerSlice);
        const sqlText = perContact ? INSERTS[table]('o.id', 'g') : INSERTS[table]('o.id', 'g', `(g % ${smallContacts})`);
        await run(`${sqlText} from unnest($1::uuid[]) o(id), generate_series(0, $2::int - 1) g`, [ids, each], ids.length * each);
      }
    };

    const rebuilt = async (table: Table, big: number, each: number, first = 0) => {
      const { rows: indexes } = await client.query<{ name: string; def: string }>(
        `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as def from pg_index i
         where i.indrelid = $1::regclass and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
        [table],
      );
      for (const ix of indexes) await client.query(`drop index ${ix.name}`);
      try {
        await fill(table, big, each, first);
      } finally {
        for (const ix of indexes) {
          const t0 = performance.now();
          await client.query(ix.def);
          log(`  ${table}: index ${ix.name} built in ${Math.round((performance.now() - t0) / 1000)} s`);
        }
      }
    };

    log(`seeding ${f0(sizes.organizations)} workspaces (one holding ${Math.round(sizes.largeShare * 100)}% of each table) ...`);
    await rebuilt('contacts', large(sizes.contacts), smallContacts, target.largeFirst);
    await client.query('update contact_counters set contact_count = $2 where organization_id = $1', [target.largeOrgId, largeContacts]);
    // A company for every tenth contact and a known browser for every other one: the joins' other sides, at their sizes.
    await rebuilt('companies', Math.floor(largeContacts / 10), Math.floor(smallContacts / 10));
    await rebuilt('tracking_visitors', Math.floor(largeContacts / 2), Math.floor(smallContacts / 2));
    await rebuilt('outbox_events', large(sizes.events), perSmall(sizes.events));
    await rebuilt('page_views', large(sizes.pageViews), perSmall(sizes.pageViews));
    // Only the large organization has an endpoint.
    await rebuilt('webhook_deliveries', sizes.deliveries, 0);
    for (const table of [
      'organizations',
      'contacts',
      'companies',
      'tracking_visitors',
      'outbox_events',
      'page_views',
      'webhook_deliveries',
    ]) {
      const t0 = performance.now();
      // Vacuum as autovacuum would have on old rows: the visibility map lets index-only scans skip the heap.
      await client.query(`vacuum (analyze) ${table}`);
      log(`  ${table}: vacuum analyze in ${Math.round((performance.now() - t0) / 1000)} s`);
    }
    return { sizes, largeContacts, seconds: (performance.now() - started) / 1000 };
  } finally {
    await client.query('reset session_replication_role').catch(() => {});
    client.off('error', onError);
    client.release();
  }
}
