/**
 * bench:replica's workspace and load: one organization with seeded contacts and events, keys that read and keys that
 * write, and the phases (a read-heavy mix, single upserts, and both by the same keys) run with autocannon.
 */
import { randomBytes } from 'node:crypto';
import { bootstrap, createApiKey } from '#core/accounts/service.ts';
import { exampleFor } from '#core/events/catalogue.ts';
import { openDb, openOrm, qb, statement } from '@leadwire/db';
import autocannon, { type Result } from 'autocannon';
import pg from 'pg';
import type { CpuShare } from './cpu.ts';
import { seedEmail } from './workload.ts';
import { seedContacts } from './setup.ts';

const RAISE_PLAN = statement<{ orgId: string }>()((p) =>
  qb.updateTable('organizations').set({ plan: 'max', contact_booster: 100_000_000 }).where('id', '=', p.orgId),
);

export interface ReplicaWorkspace {
  orgId: string;
  contacts: number;
  /** A sample of the seeded contacts' ids, for the gets. */
  ids: string[];
  /** Keys that only read (contacts, companies, events). Secrets: never printed. */
  readers: string[];
  /** Keys that write contacts and read them. */
  writers: string[];
}

/** The workspace, written straight to the primary: contacts as `npm run bench` seeds them, and a feed of events. */
export async function createReplicaWorkspace(url: string, contacts: number, events: number, keys: number): Promise<ReplicaWorkspace> {
  const orm = await openOrm(url, { pool: { min: 0, max: 4 } });
  const db = await openDb(orm);
  const readers: string[] = [];
  const writers: string[] = [];
  let orgId: string;
  try {
    const made = await bootstrap(db, {
      name: 'Replica bench',
      ownerEmail: `replica-bench-${Date.now()}@bench.example.com`,
      ownerPassword: randomBytes(18).toString('base64url'),
      plan: 'max',
    });
    orgId = made.orgId;
    await db.run(RAISE_PLAN, { orgId });
    const key = async (name: string, permissions: string[]) =>
      (await createApiKey(db, { orgId, userId: made.userId, name, type: 'public', permissions })).value;
    for (let n = 0; n < keys; n++) {
      readers.push(await key(`reader ${n}`, ['contacts:read', 'companies:read', 'events:read']));
      writers.push(await key(`writer ${n}`, ['contacts:read', 'contacts:write']));
    }
  } finally {
    await orm.close(true);
  }
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await seedContacts(pool, orgId, contacts);
    const { rows: cur } = await pool.query<{ cur: string }>('select pg_current_xact_id()::text as cur');
    // Events of the past with ids below the current transaction's: the feed reads them as committed history.
    await pool.query(
      `insert into outbox_events (id, organization_id, event, payload, created_at, txid)
       select gen_random_uuid(), $1, 'contact.updated', $4::jsonb, now() - ($3::int - g) * interval '1 second',
              (1 + g::bigint * ($2::bigint - 2) / $3::bigint)::text::xid8
       from generate_series(1, $3::int) g`,
      [orgId, cur[0]!.cur, events, JSON.stringify(exampleFor('contact.updated'))],
    );
    await pool.query('vacuum analyze outbox_events');
    const { rows } = await pool.query<{ id: string }>('select id from contacts where organization_id = $1 order by random() limit 2000', [
      orgId,
    ]);
    return { orgId, contacts, ids: rows.map((r) => r.id), readers, writers };
  } finally {
    await pool.end();
  }
}

export interface PhaseResult {
  name: string;
  seconds: number;
  ok: number;
  perSec: number;
  latencyMs: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  /** CPU of the measured window, one meter per PostgreSQL (the server's share is the same in both). */
  primary: CpuShare | null;
  standby: CpuShare | null;
}

type Kind = 'list' | 'feed' | 'search' | 'get' | 'upsert';

/** The read-heavy mix: lists, feed pages, searches by email and gets by id, in turn. */
export const READ_MIX: readonly Kind[] = ['list', 'feed', 'search', 'get'];
/** One upsert to nine reads, by the same keys: the reads after a key's write meet read-your-writes. */
export const MIXED: readonly Kind[] = ['upsert', 'get', 'list', 'search', 'feed', 'get', 'list', 'search', 'feed', 'get'];

export interface PhaseOptions {
  origin: string;
  workspace: ReplicaWorkspace;
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Starts both CPU meters; calling the result ends them. */
  meter: () => () => { primary: CpuShare | null; standby: CpuShare | null };
}

/** A warm-up (discarded), then the measured run; each request takes the next kind of `mix` and the next key. */
export async function runMix(name: string, mix: readonly Kind[], keys: readonly string[], o: PhaseOptions): Promise<PhaseResult> {
  let n = 0;
  let written = 0;
  // New contacts in every phase of every run: an upsert that updates costs another amount than one that creates.
  const tag = randomBytes(4).toString('hex');
  const w = o.workspace;
  const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)]!;
  const run = (seconds: number) =>
    autocannon({
      url: o.origin,
      connections: o.connections,
      duration: seconds,
      timeout: 30,
      requests: [
        {
          method: 'GET',
          setupRequest: (req) => {
            const i = n++;
            const kind = mix[i % mix.length]!;
            const key = keys[Math.floor(i / mix.length) % keys.length]!;
            const headers: Record<string, string> = { authorization: `Bearer ${key}` };
            const seed = Math.floor(Math.random() * w.contacts);
            if (kind === 'upsert') {
              const body = JSON.stringify({ email: `replica-${tag}-${written++}@bench.example.com`, firstName: 'R' });
              return {
                ...req,
                method: 'POST',
                path: '/api/v1/contacts/upsert',
                body,
                headers: { ...headers, 'content-type': 'application/json' },
              };
            }
            const path =
              kind === 'list'
                ? '/api/v1/contacts?limit=50'
                : kind === 'feed'
                  ? '/api/v1/events?limit=100'
                  : kind === 'search'
                    ? `/api/v1/contacts/search?email=${encodeURIComponent(seedEmail(seed))}`
                    : `/api/v1/contacts/${pick(w.ids)}`;
            return { ...req, method: 'GET', path, headers, body: undefined };
          },
        },
      ],
    });
  if (o.warmupSeconds > 0) await run(o.warmupSeconds);
  const stop = o.meter();
  const r: Result = await run(o.seconds);
  const { primary, standby } = stop();
  const seconds = (r.finish.getTime() - r.start.getTime()) / 1000;
  return {
    name,
    seconds,
    ok: r['2xx'],
    perSec: r['2xx'] / seconds,
    latencyMs: { p50: r.latency.p50, p99: r.latency.p99 },
    non2xx: r.non2xx,
    errors: r.errors,
    primary,
    standby,
  };
}
