import { jsonRows, sql, statement } from '@leadwire/db';
import { countAfter, envelope, envelopeColumns, type EnvelopeParams, refusal, touchAfter } from '../../auth/envelope-sql.ts';
import { EVENT_COLUMNS } from '../../events/outbox.ts';
import { CONTACT_COLUMN_NAMES } from '../shared/columns.ts';
import { asciiArray, asciiOnly, mergeCustomSql, scoreSql, unionTagsSql } from '../shared/score-sql.ts';

/**
 * The single contact upsert by email as ONE statement, hence one round trip and one transaction: the envelope (the key
 * confirmed by id, the request counted in its window, the Idempotency-Key's lock, a stored answer), the company of
 * `companyDomain`, the organization's room under its contact cap, the insert-or-merge of the contact (rule 4 in SQL,
 * score-sql.ts), its events in the outbox, the counter, and the stored answer. Nothing is written unless the envelope
 * lets the request through (`ok`), the company exists when named, and the organization is far from its cap.
 *
 * The merge is `insert ... on conflict do update` on the live-email unique index, so two first writes of one email
 * (in any processes) create one contact and the second merges into it, seeing its committed values; `returning old.*`
 * (PostgreSQL 18) gives the values it replaced, which the events need (tags gained, the score before). Where SQL could
 * not merge exactly as apply.ts does (a stored source or, when tags are sent, stored tags beyond ASCII), the update's
 * `where` leaves the row alone and the statement answers no contact: the caller takes the TypeScript path.
 *
 * An Idempotency-Key whose answer another request committed after this statement's snapshot (so `prior` missed it)
 * shows as the answer's insert finding that record: the statement then fails on purpose (`in_time`, division by zero,
 * 22012) and rolls back everything, count included; the caller reads the answer in a new statement (Envelope.reread).
 */
export interface UpsertOneParams extends EnvelopeParams {
  orgId: string;
  /** The new contact as one JSON array of one row (newContact in apply.ts); its score and company are computed here. */
  row: string;
  /** The written columns the request sent (first_name, last_name, phone, job_title, company_id). */
  sent: string[];
  /** Sent tags, de-duplicated ignoring case (first spelling kept), all ASCII; and their lower-cased forms. */
  tags: string[];
  tagsLower: string[];
  /** The `custom` object as sent (null values included), `{}` when none. */
  custom: string;
  /** A score given by the caller (POST /v1/leads): the manual override. */
  override: number | null;
  /** The normalised company domain, when companyDomain was sent as a string. */
  domain: string | null;
  /** `{ plan: cap }` (limits/plans.ts), and how far below its cap an organization admits without locking. */
  caps: string;
  margin: number;
  eventSource: string | null;
  /** `now` as ISO 8601 with milliseconds: the events' timestamp and the contact's updatedAt in them. */
  at: string;
  requestId: string | null;
  /** The request's fingerprint under its Idempotency-Key. */
  idemHash: string | null;
}

const iso = (ts: unknown) => sql<string>`to_char(${ts} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * `toEventContact(w)` of contacts/shared/row.ts, as jsonb, from the written row `w` (the columns `returning` names
 * below: a misspelt one fails when the statement is prepared, test/db/statements-prepare.test.ts).
 */
const eventContact = (at: unknown) => {
  const w = (c: string) => sql.ref(`w.${c}`);
  return sql<Record<string, unknown>>`jsonb_build_object('id', ${w('id')}, 'email', ${w('email')}, 'firstName', ${w('first_name')},
    'lastName', ${w('last_name')}, 'phone', ${w('phone')}, 'jobTitle', ${w('job_title')}, 'tags', to_jsonb(${w('tags')}),
    'leadScore', ${w('lead_score')}, 'stage', ${w('stage')}, 'source', ${w('source')}, 'companyId', ${w('company_id')},
    'createdAt', ${iso(w('created_at'))}, 'updatedAt', ${at}::text)`;
};

const ONE = sql.lit(1).as('one');

export const UPSERT_ONE = statement<UpsertOneParams>()((p) => {
  const sent = (column: string) => sql<boolean>`(${sql.lit(column)} = any(${p.sent}::text[]))`;
  return (
    envelope(p)
      .with('org', (db) =>
        db
          .selectFrom('organizations as o')
          .leftJoin('contact_counters as n', 'n.organization_id', 'o.id')
          .select((eb) =>
            sql<boolean>`coalesce(${eb.ref('n.contact_count')}, 0) + 1 <= (${p.caps}::jsonb ->> ${eb.ref('o.plan')}::text)::int
              + greatest(0, ${eb.ref('o.contact_booster')}) - ${p.margin}::int`.as('far'),
          )
          .where('o.id', '=', p.orgId),
      )
      .with('co', (db) =>
        db
          .selectFrom('companies as co')
          .select('co.id')
          .where('co.organization_id', '=', p.orgId)
          .where('co.domain', '=', sql<string>`${p.domain}::text`),
      )
      .with('go', (db) =>
        db
          .selectFrom('ok')
          .select(ONE)
          .where((eb) =>
            eb.exists(
              db
                .selectFrom('org')
                .select(ONE)
                .where((w) => w.ref('org.far')),
            ),
          )
          .where((eb) => eb.or([sql<boolean>`${p.domain}::text is null`, eb.exists(db.selectFrom('co').select(ONE))])),
      )
      .with('w', (db) =>
        db
          .insertInto('contacts')
          .columns(CONTACT_COLUMN_NAMES)
          .expression(
            db
              .selectFrom(jsonRows('contacts', p.row).as('v'))
              .select((eb) =>
                CONTACT_COLUMN_NAMES.map((c) => {
                  if (c === 'company_id') return eb.selectFrom('co').select('co.id').as(c);
                  if (c !== 'lead_score') return eb.ref(`v.${c}`).as(c);
                  return scoreSql({
                    email: eb.ref('v.email'),
                    phone: eb.ref('v.phone'),
                    companyId: sql<string | null>`(${eb.selectFrom('co').select('co.id')})`,
                    jobTitle: eb.ref('v.job_title'),
                    website: eb.ref('v.website'),
                    linkedin: eb.ref('v.linkedin'),
                    source: eb.ref('v.source'),
                    hasBooking: sql.lit(false),
                    adjustment: eb.ref('v.score_adjustment'),
                    override: eb.ref('v.score_override'),
                  }).as(c);
                }),
              )
              .where((eb) => eb.exists(db.selectFrom('go').select(ONE))),
          )
          .onConflict((oc) =>
            oc
              .columns(['organization_id', 'email'])
              .where('deleted_at', 'is', null)
              .where('email', 'is not', null)
              .doUpdateSet((eb) => {
                const pick = <C extends 'first_name' | 'last_name' | 'phone' | 'job_title' | 'company_id'>(c: C) =>
                  eb
                    .case()
                    .when(sent(c))
                    .then(eb.ref(`excluded.${c}`))
                    .else(eb.ref(`contacts.${c}`))
                    .end();
                const override = eb.fn.coalesce(sql<number | null>`${p.override}::int`, eb.ref('contacts.score_override'));
                return {
                  email: eb.fn.coalesce('contacts.email', 'excluded.email'),
                  first_name: pick('first_name'),
                  last_name: pick('last_name'),
                  phone: pick('phone'),
                  job_title: pick('job_title'),
                  company_id: pick('company_id'),
                  tags: unionTagsSql(eb.ref('contacts.tags'), sql`${p.tags}::text[]`, sql`${p.tagsLower}::text[]`),
                  custom: mergeCustomSql(eb.ref('contacts.custom'), sql`${p.custom}`),
                  score_override: override,
                  lead_score: scoreSql({
                    email: eb.fn.coalesce('contacts.email', 'excluded.email'),
                    phone: pick('phone'),
                    companyId: pick('company_id'),
                    jobTitle: pick('job_title'),
                    website: eb.ref('contacts.website'),
                    linkedin: eb.ref('contacts.linkedin'),
                    source: eb.ref('contacts.source'),
                    hasBooking: eb
                      .exists(
                        eb
                          .selectFrom('bookings as b')
                          .select(ONE)
                          .whereRef('b.contact_id', '=', 'contacts.id')
                          .where('b.status', '=', sql.lit('confirmed')),
                      )
                      .$castTo<boolean>(),
                    adjustment: eb.ref('contacts.score_adjustment'),
                    override,
                  }),
                  updated_at: eb.ref('excluded.updated_at'),
                };
              })
              .where((eb) =>
                eb.and([
                  asciiOnly(eb.ref('contacts.source')),
                  eb.or([sql<boolean>`cardinality(${p.tags}::text[]) = 0`, asciiArray(eb.ref('contacts.tags'))]),
                ]),
              ),
          )
          .returning([
            'id',
            'email',
            'first_name',
            'last_name',
            'phone',
            'job_title',
            'tags',
            'lead_score',
            'stage',
            'source',
            'company_id',
            'created_at',
            'updated_at',
            sql<string[] | null>`old.tags`.as('old_tags'),
            sql<number | null>`old.lead_score`.as('old_lead_score'),
            sql<boolean>`old.id is null`.as('created'),
          ]),
      )
      // The events in the order apply.ts emits them: created or updated, a tag_added per tag gained, score_changed.
      .with('ev', (db) =>
        db
          .selectFrom(
            db
              .selectFrom('w')
              .select((eb) => [
                sql<string>`case when ${eb.ref('w.created')} then 'contact.created' else 'contact.updated' end`.as('event'),
                sql<Record<string, unknown>>`jsonb_build_object('contact', ${eventContact(p.at)})`.as('data'),
                sql<number>`0::bigint`.as('ord'),
              ])
              .unionAll(
                db
                  .selectFrom('w')
                  .innerJoin(
                    sql<{ tag: string; n: number }>`unnest(w.tags[coalesce(cardinality(w.old_tags), 0) + 1:]) with ordinality`.as(
                      sql`t(tag, n)`,
                    ),
                    (join) => join.onTrue(),
                  )
                  .select(() => [
                    sql<string>`'contact.tag_added'`.as('event'),
                    sql<Record<string, unknown>>`jsonb_build_object('contact', ${eventContact(p.at)}, 'tag', t.tag)`.as('data'),
                    sql<number>`t.n`.as('ord'),
                  ])
                  .where(sql<boolean>`not w.created`),
              )
              .unionAll(
                db
                  .selectFrom('w')
                  .select(() => [
                    sql<string>`'contact.score_changed'`.as('event'),
                    sql<
                      Record<string, unknown>
                    >`jsonb_build_object('contact', ${eventContact(p.at)}, 'previousScore', w.old_lead_score)`.as('data'),
                    sql<number>`cardinality(w.tags) + 1::bigint`.as('ord'),
                  ])
                  .where('w.created', '=', false)
                  .whereRef('w.lead_score', '<>', 'w.old_lead_score'),
              )
              .as('e'),
          )
          .select(['e.event', 'e.data', 'e.ord', sql<string>`gen_random_uuid()`.as('id')]),
      )
      .with('emitted', (db) =>
        db
          .insertInto('outbox_events')
          .columns(EVENT_COLUMNS)
          .expression(
            db
              .selectFrom('ev')
              .select((eb) => [
                eb.ref('ev.id').as('id'),
                sql<string>`${p.orgId}::uuid`.as('organization_id'),
                eb.ref('ev.event').as('event'),
                sql<
                  Record<string, unknown>
                >`jsonb_build_object('id', ${eb.ref('ev.id')}, 'event', ${eb.ref('ev.event')}, 'timestamp', ${p.at}::text,
                  'data', ${eb.ref('ev.data')}) || case when ${p.eventSource}::text is null then '{}'::jsonb
                  else jsonb_build_object('source', ${p.eventSource}::text) end`.as('payload'),
                sql<Date>`${p.now}::timestamptz`.as('created_at'),
                sql<string | null>`${p.requestId}::text`.as('request_id'),
              ])
              .orderBy('ev.ord'),
          )
          .returning('id'),
      )
      .with('counted', (db) =>
        db
          .updateTable('contact_counters')
          .set((eb) => ({ contact_count: eb('contact_count', '+', sql.lit(1)) }))
          .where('organization_id', '=', p.orgId)
          .where((eb) =>
            eb.exists(
              db
                .selectFrom('w')
                .select(ONE)
                .where((w) => w.ref('w.created')),
            ),
          )
          .returning('organization_id'),
      )
      .with('stored', (db) =>
        db
          .insertInto('idempotency_records')
          .columns(['api_key_id', 'key', 'request_hash', 'status', 'response', 'created_at'])
          .expression(
            db
              .selectFrom('w')
              .select((eb) => [
                sql<string>`${p.keyId}::uuid`.as('api_key_id'),
                sql<string>`${p.idemKey}::text`.as('key'),
                sql<string>`${p.idemHash}::text`.as('request_hash'),
                sql.lit(200).as('status'),
                sql<unknown>`jsonb_build_object('id', ${eb.ref('w.id')}, 'created', ${eb.ref('w.created')},
                  'matchedBy', case when ${eb.ref('w.created')} then null else 'email' end)`.as('response'),
                sql<Date>`${p.now}::timestamptz`.as('created_at'),
              ])
              .where(sql<boolean>`${p.idemKey}::text is not null`),
          )
          .onConflict((oc) =>
            oc
              .columns(['api_key_id', 'key'])
              .doUpdateSet((eb) => ({
                request_hash: eb.ref('excluded.request_hash'),
                status: eb.ref('excluded.status'),
                response: eb.ref('excluded.response'),
                created_at: eb.ref('excluded.created_at'),
              }))
              .where('idempotency_records.created_at', '<=', sql<Date>`${p.idemSince}::timestamptz`),
          )
          .returning('api_key_id'),
      )
      // Counted after every write above has taken its locks (see envelope-sql.ts).
      .with('hit', (db) =>
        countAfter(
          db,
          p,
          sql`(select count(*) from w) + (select count(*) from emitted) + (select count(*) from counted) + (select count(*) from stored)`,
        ),
      )
      .with('touch', (db) => touchAfter(db, p))
      .selectNoFrom((eb) => [
        ...envelopeColumns(eb),
        eb.selectFrom('org').select('org.far').as('far'),
        sql<boolean>`(${p.domain}::text is not null and not exists (select 1 from co))`.as('company_missing'),
        eb.selectFrom('w').select('w.id').as('id'),
        eb.selectFrom('w').select('w.created').as('created'),
        refusal(p, sql<boolean>`exists (select 1 from w)`, sql<boolean>`exists (select 1 from stored)`),
      ])
  );
});

export type UpsertOneRow = NonNullable<(typeof UPSERT_ONE)['row']>;
