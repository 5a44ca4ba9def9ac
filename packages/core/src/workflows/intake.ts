import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import { given } from '../automation/action-inputs.ts';
import { hashKey } from '../auth/key-material.ts';
import type { Deps } from '../context.ts';
import { upsertContactsInTx } from '../contacts/v1/upsert.ts';
import { transact } from '../contacts/shared/transact.ts';
import { requireLiveContact } from '../contacts/shared/live.ts';
import { AppError, errors, issuesFromZod } from '../errors.ts';
import { WORKFLOW_RUNS_PER_WORKFLOW_PER_MINUTE } from '../limits/plans.ts';
import { enforceRateLimit } from '../limits/rate-limit.ts';
import { scoreAdjustmentHook } from '../contacts/shared/adjust-score-job.ts';
import { workflowRunQueue } from './job.ts';
import { type IntakeAnswer, type IntakeInput, IntakePayload } from './schemas.ts';
import { stepsOf, TOKEN_PREFIX } from './service.ts';
import * as q from './sql.ts';

export type IntakeDeps = Pick<Deps, 'clock' | 'jobs' | 'scoreAdjustment'> & { db: Db };

const MINUTE_MS = 60_000;
/** The token's shape (`wfh_` and 43 base62 characters): anything else is unknown without a database round trip. */
const TOKEN = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{43}$`);

const unknownUrl = () => errors.notFound('No enabled workflow has this intake URL');

/** Counts the attempt in the workflow's window (committed whatever happens next) and refuses past the limit. */
async function countAttempt(deps: IntakeDeps, workflowId: string, setHeader: (name: string, value: string | number) => void) {
  const now = deps.clock.now();
  const start = new Date(now.getTime() - (now.getTime() % MINUTE_MS));
  const [row] = await deps.db.run(q.COUNT_RUN, { bucket: `workflow:${workflowId}`, windowStart: start });
  enforceRateLimit(
    { count: row?.count ?? 1, resetAt: new Date(start.getTime() + MINUTE_MS) },
    WORKFLOW_RUNS_PER_WORKFLOW_PER_MINUTE,
    setHeader,
    now,
  );
}

/**
 * A POST to a workflow's intake URL (spec "Other intake rules" 2): the token finds an enabled workflow; the attempt
 * counts against its rate limit; the body names the contact by contactId (a live contact) or email (matched, or
 * created with source `automation`). Then, in one transaction, the run is recorded with the workflow's steps as they
 * are now and its job is queued. A refusal saves nothing (the attempt's count aside).
 */
export async function receiveWebhook(
  deps: IntakeDeps,
  input: IntakeInput,
  setHeader: (name: string, value: string | number) => void,
): Promise<IntakeAnswer> {
  const { token, ...body } = input;
  const [wf] = TOKEN.test(token) ? await deps.db.run(q.WORKFLOW_BY_TOKEN, { tokenHash: hashKey(token) }) : [];
  if (!wf || !wf.enabled) throw unknownUrl();
  await countAttempt(deps, wf.id, setHeader);

  const contactId = given(body.contactId);
  const email = given(body.email);
  if (contactId === undefined && email === undefined) {
    throw new AppError('missing_identity', 'The body needs an email or a contactId: the contact this workflow run is for');
  }
  const payload = IntakePayload.safeParse(body);
  if (!payload.success) {
    const issues = issuesFromZod(payload.error.issues);
    throw errors.validation(issues, `Validation failed: ${issues[0]?.path ? `${issues[0].path}: ` : ''}${issues[0]?.message ?? ''}`);
  }

  const now = deps.clock.now();
  return transact(deps.db, async (tx) => {
    let contact: { id: string; created: boolean };
    if (contactId !== undefined) {
      contact = { id: (await requireLiveContact(tx, wf.organization_id, contactId, 'share')).id, created: false };
    } else {
      const [outcome] = await upsertContactsInTx(
        tx,
        { orgId: wf.organization_id, plan: wf.plan, contactBooster: wf.contact_booster },
        [{ email, source: 'automation' }],
        {
          eventSource: 'automation',
          now,
          onScoreInputsChanged: scoreAdjustmentHook(deps, deps.jobs),
        },
      );
      if (!outcome?.ok) throw outcome?.error ?? errors.saveFailed(new Error('no upsert outcome'));
      contact = { id: outcome.id, created: outcome.created };
    }
    const runId = randomUUID();
    const steps = stepsOf(wf).map((s) => ({ action: s.action, input: s.input, outcome: null }));
    await tx.run(q.INSERT_RUN, {
      id: runId,
      orgId: wf.organization_id,
      contactId: contact.id,
      workflow: wf.name,
      workflowId: wf.id,
      steps: JSON.stringify(steps),
      payload: JSON.stringify(payload.data),
      now,
    });
    await workflowRunQueue.send(deps.jobs, tx, { runId });
    return { runId, status: 'queued' as const, contactId: contact.id, contactCreated: contact.created };
  });
}
