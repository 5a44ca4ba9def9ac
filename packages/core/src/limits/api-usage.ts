import { qb, sql, statement, type Db } from '@leadwire/db';
import type { Clock, ClockTimer } from '../clock.ts';
import { toPublicError } from '../errors.ts';

/** What the overview tells apart for a /v1 request (issue 29): its answer's class, 429 on its own. */
export type ApiOutcome = '2xx' | '4xx' | '429' | '5xx';

export const outcomeOfStatus = (status: number): ApiOutcome =>
  status === 429 ? '429' : status >= 500 ? '5xx' : status >= 400 ? '4xx' : '2xx';

/** The outcome of a request that failed with `err` (an AppError, a tRPC error, anything the surface maps). */
export const outcomeOfError = (err: unknown): ApiOutcome => outcomeOfStatus(toPublicError(err).status);

/** Who a counted request belongs to: the key's workspace and the key. */
export interface ApiCaller {
  orgId: string;
  keyId: string;
}

const HOUR_MS = 3_600_000;

/**
 * Entries a process keeps between flushes: one per (workspace, key, hour, outcome) seen. 20,000 keys answering all
 * four outcomes in one interval is far beyond a real process's traffic; past it, counts are dropped (never memory).
 */
const MAX_ENTRIES = 80_000;

/**
 * /v1 requests counted in this process's memory as their answers go out, per key, UTC hour and outcome, and added to
 * `activity_hourly` (series `api`) by `flush`, which the process runs every few seconds and the overview runs before it
 * reads. Counting costs a request a Map increment: no statement, no transaction, nothing on the upsert path's SQL. What
 * a crash loses is the counts since the last flush (at most FLUSH_EVERY_MS of them); requests whose key is unknown
 * (missing, malformed, revoked) belong to no workspace and are not counted.
 */
export class ApiUsageTally {
  private counts = new Map<string, number>();
  dropped = 0;

  count(caller: ApiCaller, outcome: ApiOutcome, at: Date): void {
    const t = at.getTime();
    const key = `${caller.orgId}|${caller.keyId}|${t - (t % HOUR_MS)}|${outcome}`;
    const n = this.counts.get(key);
    if (n !== undefined) this.counts.set(key, n + 1);
    else if (this.counts.size < MAX_ENTRIES) this.counts.set(key, 1);
    else this.dropped++;
  }

  get size(): number {
    return this.counts.size;
  }

  /** Takes what was counted since the last take, as rows of `activity_hourly`. */
  take(): { organization_id: string; subject: string; hour: string; outcome: string; count: number }[] {
    const taken = this.counts;
    this.counts = new Map();
    return [...taken].map(([key, count]) => {
      const [orgId, keyId, hour, outcome] = key.split('|') as [string, string, string, string];
      return { organization_id: orgId, subject: keyId, hour: new Date(Number(hour)).toISOString(), outcome, count };
    });
  }

  /** Puts counts a failed flush took back, so the next flush writes them. */
  restore(rows: ReturnType<ApiUsageTally['take']>): void {
    for (const r of rows) {
      const key = `${r.organization_id}|${r.subject}|${new Date(r.hour).getTime()}|${r.outcome}`;
      this.counts.set(key, (this.counts.get(key) ?? 0) + r.count);
    }
  }
}

/**
 * One statement per flush whatever the traffic: the rows as JSON, added to the hour's counts. A workspace deleted
 * meanwhile has no row to add to (the join drops its counts rather than failing the whole flush on its foreign key).
 */
const ADD_API_USAGE = statement<{ rows: string }>()((p) =>
  qb
    .insertInto('activity_hourly')
    .columns(['organization_id', 'series', 'hour', 'subject', 'outcome', 'count'])
    .expression(
      qb
        .selectFrom(
          sql<{
            organization_id: string;
            subject: string;
            hour: Date;
            outcome: string;
            count: number;
          }>`jsonb_to_recordset(${p.rows}::jsonb)`.as<'v'>(
            sql`v(organization_id uuid, subject text, hour timestamptz, outcome text, count int)`,
          ),
        )
        .innerJoin('organizations as o', 'o.id', 'v.organization_id')
        .select(['v.organization_id', sql.lit('api').as('series'), 'v.hour', 'v.subject', 'v.outcome', 'v.count']),
    )
    .onConflict((oc) =>
      oc
        .columns(['organization_id', 'series', 'hour', 'subject', 'outcome'])
        .doUpdateSet((eb) => ({ count: eb(eb.ref('activity_hourly.count'), '+', eb.ref('excluded.count')) })),
    ),
);

const tallies = new WeakMap<object, ApiUsageTally>();

/** One tally per running app (keyed by its Deps), as keyGuardOf keeps one guard: two apps in a test are two processes. */
export function apiUsageOf(deps: object): ApiUsageTally {
  let t = tallies.get(deps);
  if (!t) {
    t = new ApiUsageTally();
    tallies.set(deps, t);
  }
  return t;
}

/** Writes what `tally` counted since its last flush; on failure the counts go back for the next one. */
export async function flushApiUsage(db: Db, tally: ApiUsageTally): Promise<number> {
  if (tally.size === 0) return 0;
  const rows = tally.take();
  // Sorted, so two processes flushing the same keys take the rows' locks in one order.
  rows.sort((a, b) =>
    (a.organization_id + a.subject + a.hour + a.outcome).localeCompare(b.organization_id + b.subject + b.hour + b.outcome),
  );
  try {
    await db.run(ADD_API_USAGE, { rows: JSON.stringify(rows) });
  } catch (err) {
    tally.restore(rows);
    throw err;
  }
  return rows.length;
}

/** How often a serving process writes its counts: what the overview of a multi-process deployment may lag by. */
export const FLUSH_EVERY_MS = 10_000;

/** Flushes `deps`' tally every FLUSH_EVERY_MS on its clock until stopped; `stop` flushes once more. */
export function startApiUsageFlush(deps: { db: Db; clock: Clock; log: { warn(o: object, m?: string): void } }): { stop(): Promise<void> } {
  const tally = apiUsageOf(deps);
  let timer: ClockTimer | null = null;
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = flushApiUsage(deps.db, tally)
      .catch((err: unknown) => deps.log.warn({ err }, 'API usage counts not written; kept for the next flush'))
      .finally(() => {
        if (!stopped) timer = deps.clock.setTimeout(tick, FLUSH_EVERY_MS);
      });
  };
  timer = deps.clock.setTimeout(tick, FLUSH_EVERY_MS);
  return {
    stop: async () => {
      stopped = true;
      deps.clock.clearTimeout(timer);
      await running;
      await flushApiUsage(deps.db, tally).catch((err: unknown) => deps.log.warn({ err }, 'API usage counts lost at shutdown'));
    },
  };
}
