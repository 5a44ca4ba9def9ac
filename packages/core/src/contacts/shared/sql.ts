import { type DB, type Expression, expressionBuilder, jsonRows, qb, sql, statement } from '@leadwire/db';
import { CONTACT_COLUMN_NAMES, contactColumnsOf, type WrittenColumn } from './columns.ts';

/**
 * Statements both the public API and the application run on contacts. Rows travel as one JSON array parameter, so a
 * single write and a batch run the same prepared statement.
 */

const overC = expressionBuilder<DB & { c: DB['contacts'] }, 'c'>();

/** The booking bonus input of the score, read alongside every contact (alias `c`) the upsert may rescore. */
export const HAS_BOOKING = overC
  .exists(
    overC
      .selectFrom('bookings as b')
      .select(sql.lit(1).as('one'))
      .whereRef('b.contact_id', '=', 'c.id')
      .where('b.status', '=', sql.lit('confirmed')),
  )
  .$castTo<boolean>()
  .as('has_booking');

/** A contact row (alias `c`) with its booking bonus input: what `scoreOf` reads. */
export const SCORED_CONTACT = [...contactColumnsOf('c'), HAS_BOOKING] as const;

/** The organization's contact counter, read without a lock: far from the cap that is all admission needs. */
export const READ_CONTACT_COUNT = statement<{ orgId: string }>()((p) =>
  qb
    .selectFrom('contact_counters as n')
    .innerJoin('organizations as o', 'o.id', 'n.organization_id')
    .select(['n.contact_count', 'o.plan', 'o.contact_booster'])
    .where('n.organization_id', '=', p.orgId),
);

/**
 * Near the cap, the counter row is locked: new contacts are then admitted one transaction at a time against it. The
 * plan and booster come with it, read now: the cap is decided on what they are, not on what a key remembered of them.
 */
export const LOCK_CONTACT_COUNT = statement<{ orgId: string }>()((p) =>
  qb
    .selectFrom('contact_counters as n')
    .innerJoin('organizations as o', 'o.id', 'n.organization_id')
    .select(['n.contact_count', 'o.plan', 'o.contact_booster'])
    .where('n.organization_id', '=', p.orgId)
    .forUpdate('n'),
);

export const BUMP_CONTACT_COUNT = statement<{ by: number; orgId: string }>()((p) =>
  qb
    .updateTable('contact_counters')
    .set((eb) => ({ contact_count: eb('contact_count', '+', p.by) }))
    .where('organization_id', '=', p.orgId),
);

/**
 * `insert into contacts` of the rows of `json`, every column. The partial unique index decides a race between two
 * creates of one email: the loser inserts nothing. With `unless`, nothing is inserted when that query returns a row.
 */
export function insertContacts(json: unknown, unless?: Expression<unknown>) {
  const rows = qb.selectFrom(jsonRows('contacts', json).as('v')).select(contactColumnsOf('v'));
  return qb
    .insertInto('contacts')
    .columns(CONTACT_COLUMN_NAMES)
    .expression(unless ? rows.where((eb) => eb.not(eb.exists(unless))) : rows)
    .onConflict((oc) => oc.columns(['organization_id', 'email']).where('deleted_at', 'is', null).where('email', 'is not', null).doNothing())
    .returning('id');
}

export const INSERT_CONTACTS = statement<{ rows: string }>()((p) => insertContacts(p.rows));

/** The parameters of `updateContacts`: `updateContactsParams` makes them. */
export interface UpdateContactsParams {
  rows: string;
  ids: string[];
  orgId: string;
}

/**
 * Sets every written column (the compiler checks the list is complete): each row was read under its lock, so a column the write does not change is written back as
 * it was. The rows are found by primary key only: a generic plan takes the JSON rows for 100 rows and the
 * organization for an average one, so it would join through, or AND in, a scan of the organization's contacts, linear
 * in a large organization's size on every write. Hence the ids again as an array (the one index path), and the
 * organization compared as text: still checked on every row, but never an index condition.
 */
export function updateContacts(p: UpdateContactsParams) {
  return qb
    .updateTable('contacts as c')
    .from(jsonRows('contacts', p.rows).as('v'))
    .set(
      (eb) =>
        ({
          email: eb.ref('v.email'),
          first_name: eb.ref('v.first_name'),
          last_name: eb.ref('v.last_name'),
          phone: eb.ref('v.phone'),
          job_title: eb.ref('v.job_title'),
          website: eb.ref('v.website'),
          linkedin: eb.ref('v.linkedin'),
          tags: eb.ref('v.tags'),
          custom: eb.ref('v.custom'),
          lead_score: eb.ref('v.lead_score'),
          score_override: eb.ref('v.score_override'),
          stage: eb.ref('v.stage'),
          company_id: eb.ref('v.company_id'),
          email_consent: eb.ref('v.email_consent'),
          sms_consent: eb.ref('v.sms_consent'),
          updated_at: eb.ref('v.updated_at'),
        }) satisfies Record<WrittenColumn, unknown>,
    )
    .where((eb) => eb('c.id', '=', eb.fn.any(sql<string[]>`${p.ids}::uuid[]`)))
    .whereRef('c.id', '=', 'v.id')
    .where((eb) => sql<boolean>`${eb.ref('c.organization_id')}::text = ${p.orgId}::uuid::text`);
}

export const UPDATE_CONTACTS = statement<UpdateContactsParams>()((p) => updateContacts(p));

/** UPDATE_CONTACTS's parameters for rows of one organization. */
export const updateContactsParams = (rows: readonly { id: string }[], orgId: string): UpdateContactsParams => ({
  rows: JSON.stringify(rows),
  ids: rows.map((r) => r.id),
  orgId,
});
