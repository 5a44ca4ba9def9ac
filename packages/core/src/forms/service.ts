import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { iso } from '../records/dates.ts';
import { refuseForeignCursor, toPage } from '../records/pagination.ts';
import { AppError, errors } from '../errors.ts';
import type { FormCreateInput, FormListInput, FormUpdateInput, FormView, SubmissionListInput, SubmissionView } from './schemas.ts';
import * as q from './sql.ts';
import { consentKey } from '../consent/schemas.ts';

export type { FormRow } from './sql.ts';

/** Where a form can be reached: `{base_url}` (the API, with /api) and `{app_url}` (the hosted pages). */
export interface FormUrls {
  baseUrl: string;
  appUrl: string;
}

export const formUrls = (urls: FormUrls, id: string) => ({
  submitUrl: `${urls.baseUrl}/forms/${id}/submit`,
  embedUrl: `${urls.baseUrl}/forms/${id}/embed`,
  hostedUrl: `${urls.appUrl}/f/${id}`,
  thanksUrl: `${urls.appUrl}/f/${id}/thanks`,
  embedSnippet: `<div data-leadwire-form="${id}"></div><script src="${urls.baseUrl}/embed/form-loader.js" async></script>`,
});

export function toFormView(r: q.FormRow, urls: FormUrls): FormView {
  const { submitUrl, embedUrl, hostedUrl, embedSnippet } = formUrls(urls, r.id);
  return {
    id: r.id,
    name: r.name,
    fields: r.fields,
    published: r.published,
    pipelineId: r.pipeline_id,
    captcha:
      r.captcha_provider && r.captcha_site_key ? { provider: r.captcha_provider, siteKey: r.captcha_site_key, secretSet: true } : null,
    thankYou: r.redirect_url ? { redirectUrl: r.redirect_url } : r.thank_you_message ? { message: r.thank_you_message } : null,
    consent: r.consent
      ? { doubleOptIn: r.consent.doubleOptIn, purposes: r.consent.purposes.map((p) => ({ ...p, field: consentKey(p.purpose) })) }
      : null,
    submitUrl,
    embedUrl,
    hostedUrl,
    embedSnippet,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

const notFound = (id: string) => errors.notFound(`No form with id ${id}`);

async function checkPipeline(tx: Db, orgId: string, pipelineId: string | null | undefined) {
  if (!pipelineId) return;
  const [found] = await tx.run(q.PIPELINE_OF_ORG, { id: pipelineId, orgId });
  if (!found) throw new AppError('pipeline_not_found', `No pipeline with id ${pipelineId} in your organization`, { pipelineId });
}

type Captcha = Pick<q.FormRow, 'captcha_provider' | 'captcha_site_key' | 'captcha_secret'>;

/** A secret may be left out only to keep the one stored for the same provider. */
function captchaColumns(input: FormCreateInput['captcha'], stored: Captcha | null): Captcha {
  if (!input) return { captcha_provider: null, captcha_site_key: null, captcha_secret: null };
  const secret = input.secret ?? (stored?.captcha_provider === input.provider ? stored.captcha_secret : null);
  if (!secret) {
    throw errors.validation(
      [{ path: 'captcha.secret', message: `captcha.secret is required to connect ${input.provider}` }],
      'Validation failed: captcha.secret is required',
    );
  }
  return { captcha_provider: input.provider, captcha_site_key: input.siteKey, captcha_secret: secret };
}

const thankYouColumns = (t: FormCreateInput['thankYou']) => ({
  thank_you_message: t && 'message' in t ? t.message : null,
  redirect_url: t && 'redirectUrl' in t ? t.redirectUrl : null,
});

const stored = (c: Captcha, t: Pick<q.FormRow, 'thank_you_message' | 'redirect_url'>) => ({
  captchaProvider: c.captcha_provider,
  captchaSiteKey: c.captcha_site_key,
  captchaSecret: c.captcha_secret,
  thankYouMessage: t.thank_you_message,
  redirectUrl: t.redirect_url,
});

export async function listForms(db: Db, actor: InternalActor, input: FormListInput, urls: FormUrls) {
  const rows = await db.run(q.LIST_FORMS, { orgId: actor.orgId, cursor: input.cursor ?? null, limit: input.limit + 1 });
  await refuseForeignCursor(db, 'forms', { orgId: actor.orgId, cursor: input.cursor }, rows);
  return toPage(rows, input.limit, (r) => toFormView(r, urls));
}

export async function getForm(db: Db, actor: InternalActor, id: string, urls: FormUrls): Promise<FormView> {
  const [row] = await db.run(q.GET_FORM, { id, orgId: actor.orgId });
  if (!row) throw notFound(id);
  return toFormView(row, urls);
}

export async function createForm(db: Db, actor: InternalActor, input: FormCreateInput, urls: FormUrls, now: Date): Promise<FormView> {
  return db.transaction(async (tx) => {
    await checkPipeline(tx, actor.orgId, input.pipelineId);
    const c = captchaColumns(input.captcha, null);
    const t = thankYouColumns(input.thankYou);
    const [row] = await tx.run(q.INSERT_FORM, {
      id: randomUUID(),
      orgId: actor.orgId,
      name: input.name,
      fields: JSON.stringify(input.fields),
      published: input.published,
      pipelineId: input.pipelineId ?? null,
      ...stored(c, t),
      consent: input.consent ? JSON.stringify(input.consent) : null,
      now,
    });
    return toFormView(row!, urls);
  });
}

/** Fields left out keep their stored values; null clears pipeline, CAPTCHA, thank-you and consent. */
export async function updateForm(db: Db, actor: InternalActor, input: FormUpdateInput, urls: FormUrls, now: Date): Promise<FormView> {
  return db.transaction(async (tx) => {
    const [cur] = await tx.run(q.LOCK_FORM, { id: input.id, orgId: actor.orgId });
    if (!cur) throw notFound(input.id);
    if (input.pipelineId !== undefined) await checkPipeline(tx, actor.orgId, input.pipelineId);
    const c = input.captcha === undefined ? cur : captchaColumns(input.captcha, cur);
    const t = input.thankYou === undefined ? cur : thankYouColumns(input.thankYou);
    const [row] = await tx.run(q.UPDATE_FORM, {
      id: cur.id,
      name: input.name ?? cur.name,
      fields: JSON.stringify(input.fields ?? cur.fields),
      published: input.published ?? cur.published,
      pipelineId: input.pipelineId === undefined ? cur.pipeline_id : input.pipelineId,
      ...stored(c, t),
      consent:
        input.consent === undefined
          ? cur.consent
            ? JSON.stringify(cur.consent)
            : null
          : input.consent
            ? JSON.stringify(input.consent)
            : null,
      now,
    });
    return toFormView(row!, urls);
  });
}

/** Submissions stay on their contacts' timelines (with the form's name); the form itself is gone. */
export async function deleteForm(db: Db, actor: InternalActor, id: string): Promise<void> {
  const [gone] = await db.run(q.DELETE_FORM, { id, orgId: actor.orgId });
  if (!gone) throw notFound(id);
}

/** A form's submissions, newest first: what each answered and where it came from (the console's "recent submissions"). */
export async function listSubmissions(db: Db, actor: InternalActor, input: SubmissionListInput) {
  const [form] = await db.run(q.GET_FORM, { id: input.id, orgId: actor.orgId });
  if (!form) throw notFound(input.id);
  const rows = await db.run(q.LIST_SUBMISSIONS, {
    orgId: actor.orgId,
    formId: form.id,
    cursor: input.cursor ?? null,
    limit: input.limit + 1,
  });
  await refuseForeignCursor(db, { list: 'form_submissions', scope: form.id }, { orgId: actor.orgId, cursor: input.cursor }, rows);
  return toPage(
    rows,
    input.limit,
    (r): SubmissionView => ({
      id: r.id,
      createdAt: iso(r.created_at),
      contact: r.contact_id ? { id: r.contact_id, email: r.contact_email } : null,
      answers: r.answers,
      attribution: {
        utm: r.attribution.utm ?? {},
        referrer: r.attribution.referrer ?? null,
        landingPage: r.attribution.landingPage ?? null,
      },
    }),
  );
}
