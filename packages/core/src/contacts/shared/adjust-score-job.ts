import { type Db, qb, sql, statement } from '@leadwire/db';
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { scoreInputsChanged, scoreOf } from './apply.ts';
import { CONTACT_COLUMN_NAMES } from './columns.ts';
import { SCORED_CONTACT } from './sql.ts';
import { toEventContact, type ContactRow } from './row.ts';
import type { Deps, Logger } from '../../context.ts';
import { emitEvents } from '../../events/outbox.ts';
import type { JobDefinition } from '../../jobs/boss.ts';
import { type Jobs, jobQueue } from '../../jobs/queue.ts';
import { noAdjustment, openAiCompatibleAdjuster, type ScoreAdjuster } from '../../scoring/adjuster.ts';

export const ADJUST_SCORE_QUEUE = 'contact.adjust-score';

export const AdjustScorePayload = z.object({ contactIds: z.array(z.uuid()) });
export type AdjustScorePayload = z.infer<typeof AdjustScorePayload>;
export const adjustScoreQueue = jobQueue(ADJUST_SCORE_QUEUE, AdjustScorePayload);

/**
 * The `onScoreInputsChanged` hook of a contact write (every writer's one way to ask for it): queues the adjustment of
 * the contacts whose score inputs changed, in the write's transaction, when an adjuster is configured.
 */
export function scoreAdjustmentHook(
  deps: Pick<Deps, 'scoreAdjustment'>,
  jobs: Jobs,
): ((db: Db, contactIds: string[]) => Promise<void>) | undefined {
  return deps.scoreAdjustment ? (db, contactIds) => adjustScoreQueue.send(jobs, db, { contactIds }) : undefined;
}

/**
 * Adjuster calls in flight per job. A batch upsert queues up to 100 contacts in one job; one at a time with a 3 s
 * timeout each could run for minutes, while unbounded fan-out would hammer a rate-limited model endpoint.
 */
const ADJUST_CONCURRENCY = 4;

const LOAD_LIVE = statement<{ ids: string }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .select(SCORED_CONTACT)
    .where('c.id', 'in', sql<string>`(select jsonb_array_elements_text(${p.ids}::jsonb)::uuid)`)
    .where('c.deleted_at', 'is', null),
);
const LOCK_LIVE = statement<{ id: string }>()((p) =>
  qb.selectFrom('contacts as c').select(SCORED_CONTACT).where('c.id', '=', p.id).where('c.deleted_at', 'is', null).forUpdate(),
);
/** `updated_at` moves only when the visible score does: a new adjustment hidden by an override is not a change. */
const STORE_SCORE = statement<{ adjustment: number; score: number; now: Date; id: string }>()((p) =>
  qb
    .updateTable('contacts')
    .set((eb) => ({
      score_adjustment: p.adjustment,
      lead_score: p.score,
      updated_at: eb
        .case()
        .when(sql<boolean>`${eb.ref('lead_score')} is distinct from ${p.score}`)
        .then(sql<Date>`${p.now}::timestamptz`)
        .else(eb.ref('updated_at'))
        .end(),
    }))
    .where('id', '=', p.id)
    .returning(CONTACT_COLUMN_NAMES),
);

/**
 * The configured OpenAI-compatible adjuster, or none. Failures surface only here: logged with what went wrong but
 * never the request headers or the key (the adjuster scrubs the key from its messages; we log only those).
 */
export function adjusterFromConfig(config: Config, log: Logger): ScoreAdjuster {
  if (!config.SCORE_ADJUSTER_URL) return noAdjustment;
  return openAiCompatibleAdjuster({
    baseUrl: config.SCORE_ADJUSTER_URL,
    apiKey: config.SCORE_ADJUSTER_API_KEY,
    model: config.SCORE_ADJUSTER_MODEL,
    onError: (err) => log.warn({ kind: err.kind, status: err.status, reason: err.message }, 'score adjustment failed; using 0'),
  });
}

export type AdjustOutcome = 'skipped' | 'unchanged' | 'adjusted' | 'score_changed';

/**
 * Asks the adjuster about one contact and stores its answer. The (slow) adjuster call happens outside any transaction;
 * the row is then locked and, if its score inputs changed meanwhile, left alone: the write that changed them queued
 * a newer job, and storing an answer about older data after it would undo that job's work.
 */
export async function adjustContactScore(db: Db, adjuster: ScoreAdjuster, snapshot: ContactRow, clock: Clock): Promise<AdjustOutcome> {
  // The final score with neither adjustment nor override is the base: one mapping of contact columns to score inputs.
  const base = scoreOf({ ...snapshot, score_adjustment: 0, score_override: null });
  const adjustment = await adjuster.adjust({
    base,
    contact: {
      firstName: snapshot.first_name,
      lastName: snapshot.last_name,
      email: snapshot.email,
      phone: snapshot.phone,
      hasCompany: snapshot.company_id !== null,
      jobTitle: snapshot.job_title,
      website: snapshot.website,
      linkedin: snapshot.linkedin,
      source: snapshot.source,
      custom: snapshot.custom,
    },
  });

  // Read after the slow adjuster call: the time the answer is stored.
  const now = clock.now();
  return db.transaction(async (tx) => {
    const [locked] = await tx.run(LOCK_LIVE, { id: snapshot.id });
    if (!locked || scoreInputsChanged(snapshot, locked)) return 'skipped';
    const score = scoreOf({ ...locked, score_adjustment: adjustment });
    if (score === locked.lead_score && adjustment === locked.score_adjustment) return 'unchanged';
    const [stored] = await tx.run(STORE_SCORE, { adjustment, score, now, id: locked.id });
    if (!stored || score === locked.lead_score) return 'adjusted';
    await emitEvents(tx, [
      {
        orgId: stored.organization_id,
        event: 'contact.score_changed',
        source: 'ai',
        data: { contact: toEventContact(stored), previousScore: locked.lead_score },
        at: now,
      },
    ]);
    return 'score_changed';
  });
}

/**
 * Runs `fn` over `items` with at most `limit` calls in flight. Every item is tried even after a failure, and the job
 * settles only once nothing is left running; then the first failure is thrown so that pg-boss retries.
 */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item).catch((err: unknown) => void failures.push(err));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failures.length) throw new Error(`${failures.length} of ${items.length} score adjustments failed`, { cause: failures[0] });
}

/**
 * `contact.adjust-score`: queued in the same transaction as a contact write that changed score inputs. Deleted or
 * missing contacts are skipped. A database failure fails the job and pg-boss retries it; adjusting again is harmless.
 */
export function adjustScoreJob(
  deps: Deps,
  adjuster: ScoreAdjuster = adjusterFromConfig(deps.config, deps.log),
): JobDefinition<AdjustScorePayload> {
  return {
    queue: adjustScoreQueue.name,
    retryLimit: 3,
    retryDelay: 30,
    // The score moves as soon as the write commits, not at a worker's next poll (2 s).
    queueOptions: { notify: true },
    parse: adjustScoreQueue.parse,
    async handle({ contactIds }) {
      if (contactIds.length === 0) return;
      const db = deps.db;
      const contacts = await db.run(LOAD_LIVE, { ids: JSON.stringify([...new Set(contactIds)]) });
      await eachLimited(contacts, ADJUST_CONCURRENCY, async (c) => {
        await adjustContactScore(db, adjuster, c, deps.clock);
      });
    },
  };
}
