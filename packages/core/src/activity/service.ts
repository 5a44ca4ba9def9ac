import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { apiUsageOf, flushApiUsage } from '../limits/api-usage.ts';
import { contactCap, PUBLIC_API_PER_MINUTE } from '../limits/plans.ts';
import { iso, isoOrNull } from '../records/dates.ts';
import { limitBucket } from '../webhooks/delivery/create.ts';
import { DISABLE_AFTER_FAILURES, HOURLY_DELIVERY_LIMIT, hourWindow } from '../webhooks/delivery/policy.ts';
import type { Overview, Period, Series } from './schemas.ts';
import { COUNTS, ENDPOINTS, FAILING, FORMS, KEY_WINDOWS, KEYS, WORKSPACE_LIMITS } from './sql.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** A period's buckets: 24 UTC hours, or 7 or 30 UTC days, the last one the current (still counting). */
export function bucketsOf(period: Period, now: Date): { bucket: 'hour' | 'day'; starts: Date[]; stride: string } {
  const t = now.getTime();
  const [size, n, bucket] = period === '24h' ? [HOUR_MS, 24, 'hour' as const] : [DAY_MS, period === '7d' ? 7 : 30, 'day' as const];
  const last = t - (t % size);
  return {
    bucket,
    stride: bucket === 'hour' ? '1 hour' : '1 day',
    starts: Array.from({ length: n }, (_, i) => new Date(last - (n - 1 - i) * size)),
  };
}

type CountRow = NonNullable<(typeof COUNTS)['row']>;

/** Rows of one series as chart lines, one per (subject, outcome), in bucket order, busiest first. */
function linesOf(rows: CountRow[], series: string, starts: Date[], nameOf: (subject: string) => string | null): Series[] {
  const index = new Map(starts.map((d, i) => [d.getTime(), i]));
  const lines = new Map<string, Series>();
  for (const r of rows) {
    if (r.series !== series) continue;
    const i = index.get(new Date(r.bucket).getTime());
    const name = nameOf(r.subject);
    if (i === undefined || name === null) continue;
    const key = `${r.subject}|${r.outcome}`;
    let line = lines.get(key);
    if (!line) {
      line = { subject: r.subject, name, outcome: r.outcome, counts: starts.map(() => 0), total: 0 };
      lines.set(key, line);
    }
    line.counts[i] = (line.counts[i] ?? 0) + r.count;
    line.total += r.count;
  }
  return [...lines.values()].sort((a, b) => b.total - a.total || a.name.localeCompare(b.name) || a.outcome.localeCompare(b.outcome));
}

/**
 * The workspace at a glance (issue 29): its counts over `period` from `activity_hourly`, the limits in use now, and the
 * endpoints failing now. Members see their own keys' requests and no webhook figures (Webhooks is not theirs). This
 * process's request counts are written first, so a single-process deployment shows its requests at once.
 */
export async function overview(deps: { db: Db; clock: { now(): Date } }, db: Db, actor: InternalActor, period: Period): Promise<Overview> {
  await flushApiUsage(deps.db, apiUsageOf(deps));
  const now = deps.clock.now();
  const manager = actor.role !== 'member';
  const { bucket, starts, stride } = bucketsOf(period, now);
  const orgId = actor.orgId;
  const series = ['api', 'submissions', 'page_views', bucket === 'hour' ? 'visitors' : 'visitors_day', ...(manager ? ['deliveries'] : [])];
  const [counts, keys, endpoints, forms] = await Promise.all([
    db.run(COUNTS, { orgId, from: starts[0]!, stride, series }),
    db.run(KEYS, { orgId }),
    manager ? db.run(ENDPOINTS, { orgId }) : Promise.resolve([]),
    db.run(FORMS, { orgId }),
  ]);
  const mine = new Map(keys.filter((k) => manager || k.created_by_id === actor.userId).map((k) => [k.id, k]));
  const urls = new Map(endpoints.map((e) => [e.id, e.url]));
  const formNames = new Map(forms.map((f) => [f.id, f.name]));
  const t = now.getTime();
  const minute = new Date(t - (t % 60_000));
  const hour = hourWindow(now);
  const [windows, [workspace], failing] = await Promise.all([
    db.run(KEY_WINDOWS, { orgId, minute }),
    db.run(WORKSPACE_LIMITS, { orgId, bucket: limitBucket(orgId), hour }),
    manager ? db.run(FAILING, { orgId }) : Promise.resolve(null),
  ]);
  const reserved = Number(workspace?.deliveries ?? 0);
  return {
    period,
    bucket,
    timeZone: 'UTC',
    buckets: starts.map(iso),
    api: linesOf(counts, 'api', starts, (s) => mine.get(s)?.name ?? null),
    deliveries: manager ? linesOf(counts, 'deliveries', starts, (s) => urls.get(s) ?? 'a deleted endpoint') : null,
    submissions: linesOf(counts, 'submissions', starts, (s) => (s ? (formNames.get(s) ?? 'a deleted form') : 'a deleted form')),
    pageViews: [
      ...linesOf(counts, 'page_views', starts, () => 'Page views'),
      ...linesOf(counts, bucket === 'hour' ? 'visitors' : 'visitors_day', starts, () => 'Visitors').map((l) => ({
        ...l,
        outcome: 'visitors',
      })),
    ],
    limits: {
      deliveries: manager
        ? {
            used: Math.min(reserved, HOURLY_DELIVERY_LIMIT),
            limit: HOURLY_DELIVERY_LIMIT,
            overCap: Math.max(0, reserved - HOURLY_DELIVERY_LIMIT),
            resetsAt: iso(new Date(hour.getTime() + HOUR_MS)),
          }
        : null,
      keys: windows
        .filter((w) => mine.has(w.id))
        .map((w) => ({ id: w.id, name: mine.get(w.id)!.name, used: w.count, limit: PUBLIC_API_PER_MINUTE }))
        .sort((a, b) => b.used - a.used)
        .slice(0, 5),
      contacts: {
        used: Number(workspace?.contact_count ?? 0),
        limit: contactCap(workspace?.plan ?? actor.plan, workspace?.contact_booster ?? 0),
        plan: workspace?.plan ?? actor.plan,
      },
    },
    failing:
      failing?.map((f) => ({
        id: f.id,
        url: f.url,
        enabled: f.enabled,
        disabledReason: f.disabled_reason,
        failureCount: f.failure_count,
        failuresUntilDisabled: f.enabled ? Math.max(0, DISABLE_AFTER_FAILURES - f.failure_count) : 0,
        lastFailureAt: isoOrNull(f.created_at),
        lastError: f.status_code !== null ? `HTTP ${f.status_code}` : f.error,
      })) ?? null,
  };
}
