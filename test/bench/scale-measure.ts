import { randomUUID } from 'node:crypto';
import type { Actor, InternalActor } from '#core/auth/actor.ts';
import { bootstrap } from '#core/accounts/service.ts';
import { authenticate } from '#core/auth/authenticate.ts';
import { systemClock } from '#core/clock.ts';
import { KeyGuard } from '#core/limits/key-guard.ts';
import { getTimeline } from '#core/contacts/app/timeline.ts';
import { batchUpsertContacts } from '#core/contacts/v1/batch.ts';
import { searchContactByEmail } from '#core/contacts/v1/search.ts';
import { upsertContact } from '#core/contacts/v1/upsert.ts';
import { encodeFeedCursor } from '#core/feed/cursor.ts';
import { listFeed } from '#core/feed/service.ts';
import { recordPageView } from '#core/tracking/service.ts';
import { DISPATCH_BATCH, dispatchEvents } from '#core/webhooks/delivery/dispatch.ts';
import { type Db, qb, statement } from '@leadwire/db';
import type pg from 'pg';
import { buffersOf, type ExplainedStatement, explaining, indexScansOf, rowsTouched, seqScansOf } from '../support/plans.ts';
import type { CpuShare } from './cpu.ts';
import { seedFirstContacts } from './scale-seed.ts';
import { seedEmail, workload } from './workload.ts';

/** The tables that grow with traffic or with an organization: a plan must not walk them. */
export const GROWING = [
  'contacts',
  'companies',
  'outbox_events',
  'outbox_pending',
  'page_views',
  'tracking_visitors',
  'webhook_deliveries',
];

/** The measured workspace: the large organization, as the services see it. */
export interface Workspace {
  orgId: string;
  actor: Actor;
  internal: InternalActor;
  /** Its contacts are seedEmail(0 .. contacts - 1). */
  contacts: number;
}

/** The plan cap never refuses a row mid-run. */
const BOOSTER = 100_000_000;
const RAISE_PLAN = statement<{ orgId: string }>()((p) =>
  qb.updateTable('organizations').set({ plan: 'max', contact_booster: BOOSTER }).where('id', '=', p.orgId),
);

/**
 * The workspace whose operations are measured (it becomes the large one when the database is seeded): on the Max plan,
 * its first `contacts` contacts, and one endpoint subscribed to the contact events, so a dispatch round creates
 * deliveries (nothing sends them).
 */
export async function openWorkspace(db: Db, pool: pg.Pool, contacts: number): Promise<Workspace> {
  const made = await bootstrap(db, {
    name: 'Scale large',
    ownerEmail: `scale-owner-${randomUUID()}@bench.example.com`,
    ownerPassword: `pw-${randomUUID()}`,
    plan: 'max',
  });
  await db.run(RAISE_PLAN, { orgId: made.orgId });
  await seedFirstContacts(pool, made.orgId, contacts);
  await pool.query(
    `insert into webhook_endpoints (organization_id, url, events, secret) values ($1, 'https://hooks.example.com/scale', '{contact.created,contact.updated}', 'whsec_scale')`,
    [made.orgId],
  );
  const guard = new KeyGuard();
  const { actor } = await authenticate(db, `Bearer ${made.publicKey}`, 'public', { now: new Date(), guard, setHeader: () => {} });
  const internal: InternalActor = {
    orgId: made.orgId,
    userId: made.userId,
    role: 'owner',
    via: 'internal_key',
    sessionId: null,
    apiKeyId: null,
    plan: 'max',
    contactBooster: BOOSTER,
  };
  return { orgId: made.orgId, actor, internal, contacts };
}

export interface StatementFigure {
  key: string;
  buffers: number;
  rowsTouched: number;
  seqScans: string[];
  indexScans: number;
  executionMs: number;
}

export interface OpResult {
  name: string;
  calls: number;
  /** Rows or events one call handles (a batch's 100 contacts, a dispatch round's events). */
  itemsPerCall: number;
  seconds: number;
  latencyMs: { p50: number; p99: number };
  cpu: CpuShare | null;
  statements: StatementFigure[];
}

export interface Operation {
  name: string;
  /** One call; returns how many items it handled. */
  call: (db: Db, i: number) => Promise<number>;
  /** Loops at once (a dispatcher runs alone). */
  concurrency: number;
  /** False when the call found nothing left to do: the timed loop ends. */
  more?: (items: number) => boolean;
}

const PAGE = 100;
const TIMELINE_PAGE = 25;
const FEED_WINDOW = 1_000;

async function sample<T>(pool: pg.Pool, text: string, params: unknown[]): Promise<T[]> {
  return (await pool.query<T & pg.QueryResultRow>(text, params)).rows;
}

/** The operations measured, with the positions they read chosen at random over the workspace's history. */
export async function operations(pool: pg.Pool, w: Workspace, phase: string): Promise<Operation[]> {
  const opts = { eventSource: 'api' as const, now: new Date() };
  const load = workload({ phase, seedCount: w.contacts, existingRatio: 0.5 });
  // Sampled when first needed: on the empty database the feed's events are the ones the upserts above just wrote.
  const once = <T>(f: () => Promise<T>) => {
    let p: Promise<T> | undefined;
    return () => (p ??= f());
  };
  const cursors = once(async () =>
    (
      await sample<{ txid: string; seq: string }>(
        pool,
        'select txid::text, seq::text from outbox_events where organization_id = $1 order by random() limit 200',
        [w.orgId],
      )
    ).map(encodeFeedCursor),
  );
  const people = once(async () =>
    (
      await sample<{ id: string }>(
        pool,
        'select id from contacts where organization_id = $1 and deleted_at is null order by random() limit 200',
        [w.orgId],
      )
    ).map((r) => r.id),
  );
  const pick = <T>(list: T[], i: number) => list[(i * 7919) % list.length]!;
  return [
    {
      name: 'single upsert',
      concurrency: 4,
      call: async (db) => (await upsertContact(db, w.actor, load.row(), { ...opts, now: new Date() }), 1),
    },
    {
      name: 'batch upsert (100 rows)',
      concurrency: 2,
      call: async (db) => (await batchUpsertContacts(db, w.actor, load.batch(100), { ...opts, now: new Date() })).results.length,
    },
    {
      name: 'search by email',
      concurrency: 4,
      call: async (db) => (await searchContactByEmail(db, w.actor, seedEmail(Math.floor(Math.random() * w.contacts))), 1),
    },
    {
      name: `events feed page (${PAGE})`,
      concurrency: 4,
      call: async (db, i) =>
        (await listFeed(db, w.actor, { after: pick(await cursors(), i), limit: PAGE }, { window: FEED_WINDOW })).items.length,
    },
    {
      name: `timeline page (${TIMELINE_PAGE})`,
      concurrency: 4,
      call: async (db, i) => (await getTimeline(db, w.internal, pick(await people(), i), TIMELINE_PAGE)).items.length,
    },
    {
      name: 'tracking collect',
      concurrency: 4,
      call: async (db, i) => {
        // Half from a browser already tied to a contact, half from an anonymous one.
        const visitor = i % 2 ? `v-${Math.floor(Math.random() * (w.contacts / 2))}` : `anon-${randomUUID()}`;
        const input = {
          org: w.orgId,
          url: `https://site.example/p/${i % 500}`,
          referrer: null,
          title: 'Page',
          visitor,
          email: null,
          contactId: null,
        };
        await recordPageView(db, input, { clock: systemClock, perMinute: 1e9, anonymous: false, setHeader: () => {} });
        return 1;
      },
    },
    {
      // The events the phases above wrote are the backlog: one endpoint of the workspace subscribes to them.
      name: `dispatch round (up to ${DISPATCH_BATCH} events)`,
      concurrency: 1,
      call: (db) => dispatchEvents(db, new Date()),
      more: (n) => n > 0,
    },
  ];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/** The statements one call runs, each explained on three calls (generic plans, buffers), by median. */
export async function plansOf(db: Db, op: Operation, runs = 3): Promise<StatementFigure[]> {
  const seen = new Map<string, ExplainedStatement[]>();
  const explained = explaining(db, (s) => seen.set(s.key, [...(seen.get(s.key) ?? []), s]));
  for (let i = 0; i < runs; i++) await op.call(explained, 1_000_000 + i);
  return [...seen].map(([key, list]) => {
    const byBuffers = [...list].sort((a, b) => buffersOf(a.plan) - buffersOf(b.plan));
    const mid = byBuffers[Math.floor(byBuffers.length / 2)]!;
    return {
      key,
      buffers: buffersOf(mid.plan),
      rowsTouched: median(list.map((s) => rowsTouched(s.plan, GROWING))),
      seqScans: [...new Set(list.flatMap((s) => seqScansOf(s.plan, GROWING)))],
      indexScans: indexScansOf(mid.plan),
      executionMs: median(list.map((s) => s.executionMs)),
    };
  });
}

/** `op` in `concurrency` loops for `seconds` after a warm-up: latency per call and the CPU each consumer spent. */
async function timed(db: Db, op: Operation, o: { warmupSeconds: number; seconds: number; meter: () => () => CpuShare | null }) {
  let next = 0;
  const loop = async (until: number, latencies: number[] | null, items: { n: number }) => {
    while (performance.now() < until) {
      const t0 = performance.now();
      const n = await op.call(db, next++);
      latencies?.push(performance.now() - t0);
      items.n += n;
      if (op.more && !op.more(n)) return false;
    }
    return true;
  };
  const warm = { n: 0 };
  // A backlog's drain is not warmed up: the warm-up would eat the backlog the measure needs.
  const warmUntil = performance.now() + (op.more ? 0 : o.warmupSeconds * 1000);
  await Promise.all(Array.from({ length: op.concurrency }, () => loop(warmUntil, null, warm)));
  const latencies: number[] = [];
  const items = { n: 0 };
  const stop = o.meter();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: op.concurrency }, () => loop(t0 + o.seconds * 1000, latencies, items)));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = stop();
  latencies.sort((a, b) => a - b);
  return {
    calls: latencies.length,
    items: items.n,
    seconds,
    cpu,
    latencyMs: { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) },
  };
}

/** Every operation: its statements' plans first (with a backlog still there for the dispatcher), then its timing. */
export async function measureAll(
  db: Db,
  pool: pg.Pool,
  w: Workspace,
  o: { phase: string; warmupSeconds: number; seconds: number; meter: () => () => CpuShare | null; log: (m: string) => void },
): Promise<OpResult[]> {
  const out: OpResult[] = [];
  for (const op of await operations(pool, w, o.phase)) {
    o.log(`  ${op.name}: plans ...`);
    const statements = await plansOf(db, op);
    o.log(`  ${op.name}: ${o.warmupSeconds} s warm-up, ${o.seconds} s measured ...`);
    const t = await timed(db, op, o);
    out.push({
      name: op.name,
      calls: t.calls,
      itemsPerCall: t.calls ? t.items / t.calls : 0,
      seconds: t.seconds,
      latencyMs: t.latencyMs,
      cpu: t.cpu,
      statements,
    });
  }
  return out;
}
