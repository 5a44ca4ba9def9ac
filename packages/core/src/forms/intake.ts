import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { Deps } from '../context.ts';
import { ContactUpsertInput } from '../contacts/v1/schemas.ts';
import { upsertContactsInTx } from '../contacts/v1/upsert.ts';
import type { ContactRow } from '../contacts/shared/row.ts';
import { transact } from '../contacts/shared/transact.ts';
import { errors, type Issue } from '../errors.ts';
import { emitEvents } from '../events/outbox.ts';
import { FORM_SUBMITS_PER_ADDRESS_PER_MINUTE, FORM_SUBMITS_PER_FORM_PER_MINUTE } from '../limits/plans.ts';
import { enforceRateLimits } from '../limits/rate-limit.ts';
import { scoreAdjustmentHook } from '../contacts/shared/adjust-score-job.ts';
import { visitorIdOf } from '../tracking/schemas.ts';
import { identifyVisitor } from '../tracking/service.ts';
import { isHttpUrl } from '../validation/index.ts';
import { type Answer, type Attribution, contactOf, parseSubmission } from './answers.ts';
import { verifyCaptcha } from './captcha.ts';
import { type LeadRouter, leadRouterFor } from './lead-router.ts';
import { PLACE_CONTACT } from '../pipelines/sql.ts';
import { consentAnswers, recordFormConsents } from '../consent/service.ts';
import * as q from './sql.ts';
import type { FormRow, PublishedForm } from './sql.ts';

export type IntakeDeps = Pick<Deps, 'db' | 'config' | 'clock' | 'jobs' | 'scoreAdjustment' | 'log'> & { leadRouter?: LeadRouter };

export type { PublishedForm } from './sql.ts';

export interface SubmitClient {
  ip: string | undefined;
  setHeader(name: string, value: string | number): void;
}

export type ThankYou = { message: string } | { redirectUrl: string };
export const DEFAULT_THANK_YOU = 'Thank you! Your answers have been received.';

/**
 * Where a form's stored redirect leads, as a Location header can carry it (the canonical form: ASCII, percent-encoded),
 * or null when it is unusable: a value an older release let in (a line break, another scheme, no URL at all).
 */
export function redirectTarget(stored: string | null): string | null {
  return stored && isHttpUrl(stored) ? new URL(stored).href : null;
}

/** An unusable stored redirect falls back to the message: the submitter is thanked either way. */
export function thankYouOf(f: FormRow): ThankYou {
  const redirectUrl = redirectTarget(f.redirect_url);
  return redirectUrl ? { redirectUrl } : { message: f.thank_you_message ?? DEFAULT_THANK_YOU };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A published form, or 404: an unpublished, deleted or malformed id all look alike to an anonymous caller. */
export async function loadPublishedForm(db: Db, id: string): Promise<PublishedForm> {
  const [form] = UUID.test(id) ? await db.run(q.PUBLISHED_FORM, { id: id.toLowerCase() }) : [];
  if (!form) throw errors.notFound(`No published form with id ${id}`);
  return form;
}

const MINUTE_MS = 60_000;

/** Counts the attempt in the per-address and per-form windows (committed whatever happens next) and refuses past either. */
async function countAttempt(deps: IntakeDeps, form: FormRow, client: SubmitClient): Promise<void> {
  const now = deps.clock.now();
  const start = new Date(now.getTime() - (now.getTime() % MINUTE_MS));
  const byAddress = `form:${form.id}:addr:${client.ip ?? 'unknown'}`;
  const rows = await deps.db.run(q.COUNT_HIT, { byAddress, byForm: `form:${form.id}`, windowStart: start });
  const resetAt = new Date(start.getTime() + MINUTE_MS);
  const count = (bucket: string) => rows.find((r) => r.bucket === bucket)?.count ?? 1;
  enforceRateLimits(
    [
      { window: { count: count(byAddress), resetAt }, limit: FORM_SUBMITS_PER_ADDRESS_PER_MINUTE },
      { window: { count: count(`form:${form.id}`), resetAt }, limit: FORM_SUBMITS_PER_FORM_PER_MINUTE },
    ],
    (name, value) => client.setHeader(name, value),
    now,
  );
}

const invalid = (issues: Issue[]) => errors.validation(issues, `Validation failed: ${issues.map((i) => i.message).join('; ')}`);

/**
 * One submission to a published form: counted against the rate limits, checked field by field, verified with the
 * CAPTCHA provider when one is connected, then kept in one transaction: the contact created (source `form`) or matched
 * by email, the submission, the pipeline placement and `form.submitted`. A filled honeypot gets the same answer as a
 * success and leaves nothing behind.
 */
export async function submitToForm(deps: IntakeDeps, form: PublishedForm, body: unknown, client: SubmitClient): Promise<ThankYou> {
  await countAttempt(deps, form, client);
  return acceptSubmission(deps, form, body, client, { visitorId: visitorIdOf(body) });
}

/** How a caller other than the submit endpoint (the lead-capture script's) takes part in the same intake. */
export interface IntakeOptions {
  /** Runs once the submission is valid and not a bot's, before anything is kept: a limit on kept submissions. */
  admit?: () => Promise<void>;
  /** The form is no stored record (a lead capture): the submission keeps its name, without a form id. */
  detached?: boolean;
  /** Problems the caller found in the body, reported with the form's own (after the honeypot: a bot learns nothing). */
  issues?: Issue[];
  /** The submitter's tracking-snippet visitor id (`lw_vid`): their earlier anonymous page views become the contact's. */
  visitorId?: string | null;
}

/** submitToForm past its rate limits: validation, CAPTCHA, honeypot, the contact, placement and `form.submitted`. */
export async function acceptSubmission(
  deps: IntakeDeps,
  form: PublishedForm,
  body: unknown,
  client: Pick<SubmitClient, 'ip'>,
  opts: IntakeOptions = {},
): Promise<ThankYou> {
  if (!(body instanceof URLSearchParams) && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    throw invalid([{ path: '', message: 'The body must be a JSON object of field ids (or labels) to values' }]);
  }
  const parsed = parseSubmission(form.fields, body as Record<string, unknown> | URLSearchParams);
  if (parsed.honeypot) return thankYouOf(form);

  const { person: said, fieldOf } = contactOf(form.fields, parsed.answers);
  const consent = consentAnswers(form.consent, body as Record<string, unknown> | URLSearchParams);
  const issues = [...(opts.issues ?? []), ...parsed.issues, ...consent.issues];
  const contactInput = ContactUpsertInput.safeParse({ ...said, source: 'form' });
  if (!contactInput.success) {
    for (const i of contactInput.error.issues) {
      const key = String(i.path[0]) as keyof typeof fieldOf;
      issues.push({ path: fieldOf[key] ?? key, message: `${form.fields.find((f) => f.id === fieldOf[key])?.label ?? key} ${i.message}` });
    }
  }
  if (issues.length) throw invalid(issues);

  if (form.captcha_provider && form.captcha_secret && form.captcha_site_key) {
    await verifyCaptcha(deps.config, {
      provider: form.captcha_provider,
      secret: form.captcha_secret,
      siteKey: form.captcha_site_key,
      token: parsed.captchaToken,
      remoteIp: client.ip,
    });
  }
  await opts.admit?.();
  const person = contactInput.data?.email ? contactInput.data : null;
  // The form's own pipeline wins; without one the router picks (before the transaction: a model may be slow).
  const router = deps.leadRouter ?? leadRouterFor(deps.config, deps.log);
  const pipelineId = person
    ? (form.pipeline_id ??
      (await router(deps.db, { orgId: form.organization_id, formName: form.name, fields: form.fields, answers: parsed.answers })))
    : null;
  await keep(deps, form, parsed.answers, parsed.attribution, person, pipelineId, { ...opts, consents: consent.answers, ip: client.ip });
  return thankYouOf(form);
}

async function keep(
  deps: IntakeDeps,
  form: PublishedForm,
  answers: Record<string, Answer>,
  attribution: Attribution,
  person: ContactUpsertInput | null,
  pipelineId: string | null,
  opts: IntakeOptions & { consents: Map<string, boolean>; ip: string | undefined },
) {
  const now = deps.clock.now();
  await transact(deps.db, async (tx) => {
    let contact: ContactRow | null = null;
    let pipelineItemId: string | null = null;
    if (person) {
      const [outcome] = await upsertContactsInTx(
        tx,
        { orgId: form.organization_id, plan: form.plan, contactBooster: form.contact_booster },
        [person],
        {
          eventSource: 'inbound',
          now,
          onScoreInputsChanged: scoreAdjustmentHook(deps, deps.jobs),
        },
      );
      if (!outcome?.ok) throw outcome?.error ?? errors.saveFailed(new Error('no upsert outcome'));
      contact = outcome.contact;
      if (opts.visitorId) await identifyVisitor(tx, form.organization_id, opts.visitorId, contact.id);
      // Consent is the person's own answer: recorded with the contact it is about, in this transaction.
      if (form.consent)
        await recordFormConsents(
          tx,
          { jobs: deps.jobs, appUrl: deps.config.APP_URL },
          {
            orgId: form.organization_id,
            form: { id: opts.detached ? null : form.id, name: form.name, consent: form.consent },
            contact,
            answers: opts.consents,
            pageUrl: attribution.landingPage ?? attribution.referrer,
            ip: opts.ip,
            now,
          },
        );
      // A pipeline deleted meanwhile falls back to the default; a pipeline without stages places nobody.
      const [target] = await tx.run(q.ROUTE_PIPELINE, { orgId: form.organization_id, pipelineId });
      if (target?.stage_id) {
        const [item] = await tx.run(PLACE_CONTACT, {
          id: randomUUID(),
          orgId: form.organization_id,
          pipelineId: target.pipeline_id,
          stageId: target.stage_id,
          contactId: contact.id,
        });
        pipelineItemId = item?.id ?? null;
      }
    }
    const id = randomUUID();
    await tx.run(q.INSERT_SUBMISSION, {
      id,
      orgId: form.organization_id,
      formId: opts.detached ? null : form.id,
      formName: form.name,
      contactId: contact?.id ?? null,
      answers: JSON.stringify(answers),
      attribution: JSON.stringify(attribution),
      pipelineItemId,
      now,
    });
    await emitEvents(tx, [
      {
        orgId: form.organization_id,
        event: 'form.submitted',
        source: 'inbound',
        at: now,
        data: {
          form: { id: form.id, name: form.name },
          submission: { id, fields: answers, pageUrl: attribution.landingPage, attribution },
          contact: contact ? { id: contact.id, firstName: contact.first_name, email: contact.email } : null,
        },
      },
    ]);
  });
}
