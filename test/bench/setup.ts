import { randomBytes } from 'node:crypto';
import { bootstrap, createApiKey } from '#core/accounts/service.ts';
import { openDatabase, openDb, openOrm, qb, statement } from '@leadwire/db';
import type pg from 'pg';
import { EMAIL_DOMAIN, SEED_PREFIX } from './workload.ts';

/** Well above what any phase creates, so the plan cap never refuses a row mid-run. */
const BOOSTER = 100_000_000;
const RAISE_PLAN = statement<{ orgId: string }>()((p) =>
  qb.updateTable('organizations').set({ plan: 'max', contact_booster: BOOSTER }).where('id', '=', p.orgId),
);

export interface BenchOrg {
  orgId: string;
  /** Public API keys with contacts:write. Secrets: never printed. */
  keys: string[];
}

/**
 * Joins the server's running embedded cluster (the admin CLI does the same) and returns its URL. Throws when the
 * cluster is not up, which means the server did not start the way we expect.
 */
export async function clusterUrl(dataDir: string): Promise<string> {
  const db = await openDatabase({ dataDir });
  if (db.ownsCluster) {
    await db.stop();
    throw new Error(`no running cluster under ${dataDir}: the server should have started it`);
  }
  return db.url;
}

/**
 * One organization on the Max plan with a large booster and `keyCount` Public API keys, made with the admin service
 * exactly as an operator would. Keys are many because the limit is 600 requests per minute per key and the phases run
 * thousands per second.
 */
export async function createBenchOrg(url: string, keyCount: number): Promise<BenchOrg> {
  const orm = await openOrm(url, { pool: { min: 0, max: 4 } });
  const db = await openDb(orm);
  try {
    const { orgId, userId } = await bootstrap(db, {
      name: 'Bench Org',
      ownerEmail: `bench-owner-${Date.now()}@bench.example.com`,
      // Never used to sign in: a random one keeps the run free of fixed secrets.
      ownerPassword: randomBytes(18).toString('base64url'),
      plan: 'max',
    });
    await db.run(RAISE_PLAN, { orgId: orgId });
    const keys: string[] = [];
    for (let n = 0; n < keyCount; n++) {
      const key = await createApiKey(db, { orgId, userId, name: `bench ${n}`, type: 'public', permissions: ['contacts:write'] });
      keys.push(key.value);
    }
    return { orgId, keys };
  } finally {
    await orm.close(true);
  }
}

/** Pre-existing contacts for the "existing email" half of the mix, with the organization's count kept true. */
export async function seedContacts(pool: pg.Pool, orgId: string, count: number): Promise<void> {
  // Same addresses as seedEmail(n), generated in the database so seeding takes a second, not minutes.
  await pool.query(
    `insert into contacts (organization_id, email, first_name, last_name, tags, source, lead_score)
     select $1, $2 || g || $3, 'Seed', 'Contact ' || g, '{seed}', 'bench', 15 from generate_series(0, $4::int - 1) g`,
    [orgId, SEED_PREFIX, `@${EMAIL_DOMAIN}`, count],
  );
  await pool.query(`update contact_counters set contact_count = contact_count + $2 where organization_id = $1`, [orgId, count]);
  await pool.query('analyze contacts');
}

/** A POST of JSON with a bearer key to the bench's server; anything but 2xx throws with the answer. */
export async function postJson<T>(url: string, key: string, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** A numeric bench setting from the environment (unset or empty: `fallback`); below `min` stops the bench. */
export function envNumber(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min)
    throw new Error(`${name} must be ${min === 0 ? 'a non-negative number' : `a number of at least ${min}`}, got ${JSON.stringify(raw)}`);
  return n;
}
