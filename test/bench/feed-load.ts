import { randomBytes } from 'node:crypto';
import { bootstrap, createApiKey } from '#core/accounts/service.ts';
import { exampleFor } from '#core/events/catalogue.ts';
import { encodeFeedCursor } from '#core/feed/cursor.ts';
import { openDb, openOrm } from '@leadwire/db';
import autocannon, { type Result } from 'autocannon';
import type pg from 'pg';
import type { CpuShare } from './cpu.ts';

/** One workspace of the feed benchmark: its events, its keys (events:read) and cursors spread over its feed. */
export interface FeedWorkspace {
  name: string;
  orgId: string;
  events: number;
  keys: string[];
  cursors: string[];
  /** The highest transaction id the events were spread up to: the reference computes the same positions from it. */
  cur: string;
}

/** One in 10,000 events is a `form.submitted`: a filter on it walks whole windows of events that do not match. */
export const RARE_EVENT = 'form.submitted';

/**
 * A workspace with `events` events, written by the database in one statement (a million takes seconds, not the hours
 * a million requests would), with a realistic payload (a whole contact). The events' transactions are spread over
 * the ids already used, so all of them are below the horizon as old events are; the dispatch triggers are skipped
 * (replica role), or the server's pump would spend the measured window queueing a million deliveries to no one.
 */
export async function createFeedWorkspace(
  url: string,
  pool: pg.Pool,
  name: string,
  events: number,
  keyCount: number,
): Promise<FeedWorkspace> {
  const orm = await openOrm(url, { pool: { min: 0, max: 4 } });
  const db = await openDb(orm);
  let orgId: string;
  const keys: string[] = [];
  try {
    const made = await bootstrap(db, {
      name: `Feed ${name}`,
      ownerEmail: `feed-${name}-${Date.now()}@bench.example.com`,
      ownerPassword: randomBytes(18).toString('base64url'),
      plan: 'max',
    });
    orgId = made.orgId;
    for (let n = 0; n < keyCount; n++) {
      const key = await createApiKey(db, { orgId, userId: made.userId, name: `feed ${n}`, type: 'public', permissions: ['events:read'] });
      keys.push(key.value);
    }
  } finally {
    await orm.close(true);
  }
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ cur: string }>('select pg_current_xact_id()::text as cur');
    const cur = rows[0]!.cur;
    await client.query('begin');
    await client.query('set local session_replication_role = replica');
    await client.query(
      `insert into outbox_events (id, organization_id, event, payload, created_at, txid)
       select gen_random_uuid(), $1, case when g % 10000 = 0 then $5 else 'contact.updated' end, $4::jsonb,
              now() - ($3::int - g) * interval '1 second', (1 + g::bigint * ($2::bigint - 2) / $3::bigint)::text::xid8
       from generate_series(1, $3::int) g`,
      [orgId, cur, events, JSON.stringify(exampleFor('contact.updated')), RARE_EVENT],
    );
    await client.query('commit');
    await client.query('vacuum analyze outbox_events');
    // A thousand positions spread over the feed: "before every event of transaction t" for t along the workspace.
    const positions = Array.from({ length: 1000 }, (_, i) => ({
      txid: String(1n + (BigInt(Math.floor(((i + 0.5) / 1000) * events)) * (BigInt(cur) - 2n)) / BigInt(events)),
      seq: '0',
    }));
    return { name, orgId, events, keys, cursors: positions.map(encodeFeedCursor), cur };
  } finally {
    client.release();
  }
}

export interface FeedPhaseResult {
  name: string;
  connections: number;
  seconds: number;
  pagesPerSec: number;
  eventsPerSec: number;
  latencyMs: { p50: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  cpu: CpuShare | null;
}

/** GET /api/v1/events from a random cursor of the workspace, keys taken in turn (600 requests per minute each). */
export async function runFeedPhase(o: {
  name: string;
  origin: string;
  workspace: FeedWorkspace;
  query: string;
  connections: number;
  warmupSeconds: number;
  seconds: number;
  meter: () => () => CpuShare | null;
}): Promise<FeedPhaseResult> {
  let next = 0;
  let events = 0;
  const w = o.workspace;
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
            const n = next++;
            req.headers = { ...req.headers, authorization: `Bearer ${w.keys[n % w.keys.length]!}` };
            req.path = `/api/v1/events?after=${w.cursors[(n * 7919) % w.cursors.length]!}&${o.query}`;
            return req;
          },
          // Counting `"event":` keeps the load generator's own CPU per response small (no JSON parse).
          onResponse: (status, body) => {
            if (status === 200) events += body.split('"event":').length - 1;
          },
        },
      ],
    });
  if (o.warmupSeconds > 0) await run(o.warmupSeconds);
  events = 0;
  const stop = o.meter();
  const r: Result = await run(o.seconds);
  const cpu = stop();
  const seconds = (r.finish.getTime() - r.start.getTime()) / 1000;
  return {
    name: o.name,
    connections: o.connections,
    seconds,
    pagesPerSec: r['2xx'] / seconds,
    eventsPerSec: events / seconds,
    latencyMs: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max },
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    cpu,
  };
}
