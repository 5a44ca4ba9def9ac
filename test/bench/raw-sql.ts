import { randomUUID } from 'node:crypto';
import { hashKey } from '@leadwire/core/auth/key-material.ts';
import { applyRow, newContact, type ResolvedRow } from '@leadwire/core/contacts/shared/apply.ts';
import { type ContactRow, toEventContact } from '@leadwire/core/contacts/shared/row.ts';
import type { ContactUpsertInput } from '@leadwire/core/contacts/v1/schemas.ts';
import { CAP_MARGIN } from '@leadwire/core/contacts/v1/upsert.ts';
import * as contactSql from '@leadwire/core/contacts/v1/sql.ts';
import { AUTHENTICATE_SQL } from '@leadwire/core/auth/authenticate.ts';
import { eventRowsParam, INSERT_EVENTS_SQL } from '@leadwire/core/events/outbox.ts';
import { contactCap, PUBLIC_API_PER_MINUTE } from '@leadwire/core/limits/plans.ts';
import { type Plan, TxDb } from '@leadwire/db';
import pg from 'pg';
import type { CpuShare } from './cpu.ts';
import type { Workload } from './workload.ts';

interface AuthRow {
  id: string;
  organization_id: string;
  plan: Plan;
  contact_booster: number;
  hits: number | null;
}

/**
 * One POST /v1/contacts/upsert as the API runs it for a row with an email, statement for statement: authenticate and
 * count the request, then BEGIN, lock the match, either (lock the organization's count, insert, bump the count) or
 * update, write the outbox event, COMMIT. Rows and events are built with the application's own helpers so the
 * parameters are the same too. What is left out is everything above SQL: HTTP, tRPC, zod, the ORM.
 */
async function upsertOnce(c: pg.Client, key: string, input: ContactUpsertInput): Promise<{ created: boolean; overLimit: boolean }> {
  // The application's own statement runner: the same SQL text, the same named prepared statements.
  const db = new TxDb(c as unknown as ConstructorParameters<typeof TxDb>[0]);
  const [actor] = await db.execute<AuthRow[]>(AUTHENTICATE_SQL, [hashKey(key), 'public', 'public']);
  if (!actor) throw new Error('authentication failed');
  const orgId = actor.organization_id;
  const now = new Date();
  const row: ResolvedRow = { input, companyId: undefined, source: input.source ?? 'api', scoreOverride: undefined };
  let bumpBy = 0;
  await c.query('begin');
  try {
    const matched = (await db.execute<ContactRow[]>(contactSql.MATCH_BY_EMAIL, [orgId, JSON.stringify([input.email])]))[0];
    let contact: ContactRow | undefined;
    let created = false;
    if (!matched) {
      // The application's admission far from the cap: an unlocked read, and the counter bumped after commit.
      const org = (await db.execute<{ contact_count: number }[]>(contactSql.READ_CONTACT_COUNT, [orgId]))[0];
      if (contactCap(actor.plan, actor.contact_booster) - CAP_MARGIN - (org?.contact_count ?? 0) < 1) throw new Error('near the contact cap');
      const fresh = newContact(orgId, randomUUID(), row, now);
      const inserted = await db.execute<{ id: string }[]>(contactSql.INSERT_CONTACTS, [JSON.stringify([fresh])]);
      bumpBy = inserted.length;
      if (inserted.length) {
        contact = fresh;
        created = true;
      }
    }
    const event = (c: ContactRow) => [
      { orgId, event: created ? 'contact.created' : 'contact.updated', source: 'api' as const, data: { contact: toEventContact(c) }, at: now },
    ];
    if (created) {
      await db.execute(INSERT_EVENTS_SQL, [eventRowsParam(event(contact!))]);
    } else {
      const current = matched ?? (await db.execute<ContactRow[]>(contactSql.MATCH_BY_EMAIL, [orgId, JSON.stringify([input.email])]))[0];
      if (!current) throw new Error('contact vanished');
      contact = applyRow(current, row, now);
      await db.execute(contactSql.UPDATE_CONTACTS_AND_EMIT, [JSON.stringify([contact]), orgId, eventRowsParam(event(contact))]);
    }
    await c.query('commit');
    if (bumpBy) await db.execute(contactSql.BUMP_CONTACT_COUNT, [bumpBy, orgId]);
    return { created, overLimit: Number(actor.hits ?? 0) > PUBLIC_API_PER_MINUTE };
  } catch (err) {
    await c.query('rollback');
    throw err;
  }
}

export interface RawPhaseResult {
  clients: number;
  seconds: number;
  ops: number;
  opsPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  created: number;
  updated: number;
  errors: number;
  firstError?: string;
  /** Requests the API would have refused as over the per-key limit (counted, never enforced here). */
  overLimit: number;
  cpu: CpuShare | null;
}

function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** `clients` connections, each running upserts back to back; only operations finishing inside the window count. */
export async function runRawSql(o: {
  url: string;
  keys: readonly string[];
  clients: number;
  warmupSeconds: number;
  seconds: number;
  work: Workload;
  meter: () => () => CpuShare | null;
}): Promise<RawPhaseResult> {
  const clients = Array.from({ length: o.clients }, () => new pg.Client({ connectionString: o.url, application_name: 'leadwire-bench-raw' }));
  await Promise.all(clients.map((c) => c.connect()));
  let next = 0;
  const latencies: number[] = [];
  let created = 0;
  let updated = 0;
  let errors = 0;
  let overLimit = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const measureFrom = start + o.warmupSeconds * 1000;
  const measureTo = measureFrom + o.seconds * 1000;
  const meter: { stop?: () => CpuShare | null; cpu: CpuShare | null } = { cpu: null };
  const endMeter = () => {
    if (meter.stop && !meter.cpu) meter.cpu = meter.stop();
  };
  const meterOn = setTimeout(() => (meter.stop = o.meter()), measureFrom - start);
  const meterOff = setTimeout(endMeter, measureTo - start);
  try {
    await Promise.all(
      clients.map(async (c) => {
        while (performance.now() < measureTo) {
          const t0 = performance.now();
          try {
            const r = await upsertOnce(c, o.keys[next++ % o.keys.length]!, o.work.row());
            const t1 = performance.now();
            if (t1 < measureFrom || t1 > measureTo) continue;
            latencies.push(t1 - t0);
            if (r.created) created++;
            else updated++;
            if (r.overLimit) overLimit++;
          } catch (err) {
            errors++;
            firstError ??= err instanceof Error ? err.message : String(err);
          }
        }
      }),
    );
  } finally {
    clearTimeout(meterOn);
    clearTimeout(meterOff);
    endMeter();
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
  latencies.sort((a, b) => a - b);
  return {
    clients: o.clients,
    seconds: o.seconds,
    ops: latencies.length,
    opsPerSec: latencies.length / o.seconds,
    latencyMs: { p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), max: latencies.at(-1) ?? 0 },
    created,
    updated,
    errors,
    ...(firstError ? { firstError } : {}),
    overLimit,
    cpu: meter.cpu,
  };
}
