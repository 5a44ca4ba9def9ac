import { qb, sql, statement, type DB } from '@leadwire/db';
import { firstStageId } from '../pipelines/sql.ts';
import { newestFirst } from '../records/pagination.ts';
import type { ExpressionBuilder } from '@leadwire/db';
import type { FormField } from './schemas.ts';
import type { FormConsent } from '../consent/schemas.ts';

/** A form's columns but `fields`, which every selection adds typed (jsonb the forms service alone writes, checked). */
const FORM = [
  'id',
  'organization_id',
  'name',
  'published',
  'pipeline_id',
  'captcha_provider',
  'captcha_site_key',
  'captcha_secret',
  'thank_you_message',
  'redirect_url',
  'created_at',
  'updated_at',
] as const;

const form = (eb: ExpressionBuilder<DB, 'forms'>) =>
  [...FORM, eb.ref('fields').$castTo<FormField[]>().as('fields'), eb.ref('consent').$castTo<FormConsent | null>().as('consent')] as const;

export const GET_FORM = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('forms').select(form).where('id', '=', p.id).where('organization_id', '=', p.orgId),
);
export type FormRow = NonNullable<(typeof GET_FORM)['row']>;

export const LOCK_FORM = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('forms').select(form).where('id', '=', p.id).where('organization_id', '=', p.orgId).forUpdate(),
);

/** Newest first, after the `cursor` form (null: from the start), keyed by (created_at, id). */
export const LIST_FORMS = statement<{ orgId: string; cursor: string | null; limit: number }>()((p) =>
  newestFirst(qb.selectFrom('forms').select(form).where('organization_id', '=', p.orgId), 'forms', 'forms', p),
);

/** The stored columns a form's create and update set; `fields` as JSON text. */
interface FormValues {
  name: string;
  fields: string;
  published: boolean;
  pipelineId: string | null;
  captchaProvider: FormRow['captcha_provider'];
  captchaSiteKey: string | null;
  captchaSecret: string | null;
  thankYouMessage: string | null;
  redirectUrl: string | null;
  /** The consent checkboxes as JSON text, or null. */
  consent: string | null;
  now: Date;
}

const formValues = (p: FormValues) => ({
  name: p.name,
  fields: sql<FormField[]>`${p.fields}::jsonb`,
  published: p.published,
  pipeline_id: p.pipelineId,
  captcha_provider: p.captchaProvider,
  captcha_site_key: p.captchaSiteKey,
  captcha_secret: p.captchaSecret,
  thank_you_message: p.thankYouMessage,
  redirect_url: p.redirectUrl,
  consent: sql<Record<string, unknown> | null>`${p.consent}::jsonb`,
  updated_at: p.now,
});

export const INSERT_FORM = statement<FormValues & { id: string; orgId: string }>()((p) =>
  qb
    .insertInto('forms')
    .values({ id: p.id, organization_id: p.orgId, ...formValues(p), created_at: p.now })
    .returning(form),
);

export const UPDATE_FORM = statement<FormValues & { id: string }>()((p) =>
  qb.updateTable('forms').set(formValues(p)).where('id', '=', p.id).returning(form),
);

export const DELETE_FORM = statement<{ id: string; orgId: string }>()((p) =>
  qb.deleteFrom('forms').where('id', '=', p.id).where('organization_id', '=', p.orgId).returning('id'),
);

/** A pipeline a form may name: one of the organization's own. */
export const PIPELINE_OF_ORG = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('pipelines').select('id').where('id', '=', p.id).where('organization_id', '=', p.orgId).forShare(),
);

/** A published form and what intake needs of its organization (plan and cap), for an anonymous submitter. */
export const PUBLISHED_FORM = statement<{ id: string }>()((p) =>
  qb
    .selectFrom('forms as f')
    .innerJoin('organizations as o', 'o.id', 'f.organization_id')
    .select((eb) => [
      ...FORM.map((c) => `f.${c}` as const),
      eb.ref('f.fields').$castTo<FormField[]>().as('fields'),
      eb.ref('f.consent').$castTo<FormConsent | null>().as('consent'),
      'o.plan',
      'o.contact_booster',
    ])
    .where('f.id', '=', p.id)
    .where((eb) => eb.ref('f.published')),
);
export type PublishedForm = NonNullable<(typeof PUBLISHED_FORM)['row']>;

/** The chosen pipeline (the form's, or the router's pick), else the organization's default: its id and first stage. */
export const ROUTE_PIPELINE = statement<{ orgId: string; pipelineId: string | null }>()((p) =>
  qb
    .selectFrom('pipelines as p')
    .select((eb) => ['p.id as pipeline_id', firstStageId(eb).as('stage_id')])
    .where('p.organization_id', '=', p.orgId)
    .where((eb) => eb.or([eb('p.id', '=', sql<string>`${p.pipelineId}::uuid`), eb.ref('p.is_default')]))
    .orderBy(
      (eb) => sql<boolean>`(${eb.ref('p.id')} = ${p.pipelineId}::uuid)`,
      (ob) => ob.desc().nullsLast(),
    )
    .limit(sql.lit(1)),
);

export const INSERT_SUBMISSION = statement<{
  id: string;
  orgId: string;
  formId: string | null;
  formName: string;
  contactId: string | null;
  answers: string;
  attribution: string;
  pipelineItemId: string | null;
  now: Date;
}>()((p) =>
  qb.insertInto('form_submissions').values({
    id: p.id,
    organization_id: p.orgId,
    form_id: p.formId,
    form_name: p.formName,
    contact_id: p.contactId,
    answers: sql`${p.answers}::jsonb`,
    attribution: sql`${p.attribution}::jsonb`,
    pipeline_item_id: p.pipelineItemId,
    created_at: p.now,
  }),
);

/** Fixed one-minute windows in the shared counters table (the hourly cleanup removes spent ones). */
export const COUNT_HIT = statement<{ byAddress: string; byForm: string; windowStart: Date }>()((p) =>
  qb
    .insertInto('rate_limit_counters')
    .values([
      { bucket: p.byAddress, window_start: sql`${p.windowStart}::timestamptz`, count: sql.lit(1) },
      { bucket: p.byForm, window_start: sql`${p.windowStart}::timestamptz`, count: sql.lit(1) },
    ])
    .onConflict((oc) =>
      oc.columns(['bucket', 'window_start']).doUpdateSet((eb) => ({ count: sql<number>`${eb.ref('rate_limit_counters.count')} + 1` })),
    )
    .returning(['bucket', 'count']),
);

/**
 * A form's submissions, newest first after the cursor, with the contact each made or matched (null when it had no email
 * answer, or the contact is in the trash: the console then shows the answers alone).
 */
export const LIST_SUBMISSIONS = statement<{ orgId: string; formId: string; cursor: string | null; limit: number }>()((p) =>
  newestFirst(
    qb
      .selectFrom('form_submissions as s')
      .leftJoin('contacts as c', (j) => j.onRef('c.id', '=', 's.contact_id').on('c.deleted_at', 'is', null))
      .select((eb) => [
        's.id',
        's.created_at',
        eb.ref('s.answers').$castTo<Record<string, string | number | boolean>>().as('answers'),
        eb
          .ref('s.attribution')
          .$castTo<{ utm?: Record<string, string>; referrer?: string | null; landingPage?: string | null }>()
          .as('attribution'),
        'c.id as contact_id',
        'c.email as contact_email',
      ])
      .where('s.organization_id', '=', p.orgId)
      .where('s.form_id', '=', p.formId),
    'form_submissions',
    's',
    p,
  ),
);
