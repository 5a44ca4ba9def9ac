import { qb, sql, statement } from '@leadwire/db';
import { EVENT_COLUMNS, eventRows } from '../../events/outbox.ts';
import { contactColumnsOf } from '../shared/columns.ts';
import { insertContacts, SCORED_CONTACT, updateContacts, type UpdateContactsParams } from '../shared/sql.ts';

export { BUMP_CONTACT_COUNT, INSERT_CONTACTS, LOCK_CONTACT_COUNT, READ_CONTACT_COUNT } from '../shared/sql.ts';

/**
 * Every statement of the contact upsert path, in one place, each built once. Lists travel as one JSON parameter (one
 * statement text and one parameter type whatever the batch size, so each is prepared once).
 */

/** `select 1`, for `exists` over a CTE. */
const ONE = sql.lit(1).as('one');

/**
 * Lists travel as JSON and are matched with `= any(array(...))`: an index condition on the organization's unique key,
 * never a scan of all its rows (a generic plan takes a set-returning function for 100 rows and the organization for an
 * average one, and with `in (select ...)` could choose to filter every row of a large organization).
 */
const anyOf = (json: unknown) => sql<string[]>`array(select jsonb_array_elements_text(${json}::jsonb))`;

export const FIND_COMPANIES = statement<{ orgId: string; domains: string }>()((p) =>
  qb
    .selectFrom('companies')
    .select(['id', 'domain'])
    .where('organization_id', '=', p.orgId)
    .where((eb) => eb('domain', '=', eb.fn.any(anyOf(p.domains)))),
);

/**
 * Name matching has no unique index to lean on, so concurrent upserts of one name at one company serialise on an
 * advisory lock per identity; keys are sorted so two batches never wait on each other in a cycle.
 */
export const LOCK_IDENTITIES = statement<{ keys: string }>()((p) =>
  qb
    .selectFrom(
      qb
        // The function's one column is named `value`.
        .selectFrom(sql<{ value: string }>`jsonb_array_elements_text(${p.keys}::jsonb)`.as('k'))
        .select('k.value')
        .orderBy('k.value')
        .as('s'),
    )
    .select((eb) => sql<unknown>`pg_advisory_xact_lock(hashtextextended(${eb.ref('s.value')}, 0))`.as('locked')),
);

/** Rows are locked in id order so concurrent batches touching the same contacts cannot deadlock. */
export const MATCH_BY_EMAIL = statement<{ orgId: string; emails: string }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .select(SCORED_CONTACT)
    .where('c.organization_id', '=', p.orgId)
    .where((eb) => eb('c.email', '=', eb.fn.any(anyOf(p.emails))))
    .where('c.deleted_at', 'is', null)
    .orderBy('c.id')
    .forUpdate(),
);

/** The name identities of a batch: (company, lowercased first and last name). */
const nameKeys = (json: unknown) =>
  sql<{ company_id: string; first_name: string; last_name: string }>`jsonb_to_recordset(${json}::jsonb)`.as<'k'>(
    sql`k(company_id uuid, first_name text, last_name text)`,
  );

/** Upsert rule 3: when several contacts share the name at the company, the oldest wins. */
export const MATCH_BY_NAME = statement<{ names: string; orgId: string }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .select(SCORED_CONTACT)
    .where('c.id', 'in', (eb) =>
      eb
        .selectFrom('contacts as c')
        .innerJoin(nameKeys(p.names), (join) =>
          join
            .onRef('c.company_id', '=', 'k.company_id')
            .on((eb) => eb(eb.fn('lower', ['c.first_name']), '=', eb.ref('k.first_name')))
            .on((eb) => eb(eb.fn('lower', ['c.last_name']), '=', eb.ref('k.last_name'))),
        )
        .distinctOn(['c.company_id', (eb) => eb.fn('lower', ['c.first_name']), (eb) => eb.fn('lower', ['c.last_name'])])
        .select('c.id')
        .where('c.organization_id', '=', p.orgId)
        .where('c.deleted_at', 'is', null)
        .orderBy('c.company_id')
        .orderBy((eb) => eb.fn('lower', ['c.first_name']))
        .orderBy((eb) => eb.fn('lower', ['c.last_name']))
        .orderBy('c.created_at')
        .orderBy('c.id'),
    )
    .orderBy('c.id')
    .forUpdate(),
);

/** The updates and their events in one round trip: a data-modifying CTE runs whether or not it is read. */
export const UPDATE_CONTACTS_AND_EMIT = statement<UpdateContactsParams & { events: string }>()((p) =>
  qb
    .with('updated', () => updateContacts(p))
    .insertInto('outbox_events')
    .columns(EVENT_COLUMNS)
    .expression(eventRows(p.events)),
);

/**
 * The single upsert's statements, no transaction around them. The first matches the email (unlocked, with the row
 * version, xmin) and, when nothing matches, inserts the new contact and its event in the same statement: one row back,
 * the match's columns or, for a new contact, only `inserted_id` (null when another request created the email first).
 * A new contact also bumps the organization's counter there: the bump reads `written`, so it runs after the insert and
 * the counter row is locked only from then until this statement commits, never while the insert waits on a
 * concurrent create of the same email (no lock cycle).
 * The second, for a match, writes the contact and its event only if the row is still the version read, and returns
 * the event's id when it wrote.
 */
export const MATCH_OR_INSERT_AND_EMIT = statement<{ orgId: string; email: string; rows: string; events: string }>()((p) =>
  qb
    .with('m', (db) =>
      db
        .selectFrom('contacts as c')
        .select(SCORED_CONTACT)
        // xmin is a system column: the entity does not list it.
        .select(sql<string>`c.xmin::text`.as('version'))
        .where('c.organization_id', '=', p.orgId)
        .where('c.email', '=', p.email)
        .where('c.deleted_at', 'is', null),
    )
    .with('written', (db) => insertContacts(p.rows, db.selectFrom('m').select(ONE)))
    .with('emitted', (db) =>
      db
        .insertInto('outbox_events')
        .columns(EVENT_COLUMNS)
        .expression(eventRows(p.events, db.selectFrom('written').select(ONE))),
    )
    .with('counted', (db) =>
      db
        .updateTable('contact_counters')
        .set((eb) => ({ contact_count: eb('contact_count', '+', sql.lit(1)) }))
        .where('organization_id', '=', p.orgId)
        .where((eb) => eb.exists(db.selectFrom('written').select(ONE))),
    )
    .selectFrom(qb.selectNoFrom(ONE).as('one'))
    .leftJoin('m as c', (join) => join.onTrue())
    .select([...contactColumnsOf('c'), 'c.has_booking', 'c.version'])
    .select((eb) => eb.selectFrom('written').select('id').as('inserted_id')),
);

export const UPDATE_ONE_IF_UNCHANGED_AND_EMIT = statement<UpdateContactsParams & { version: string; events: string }>()((p) =>
  qb
    .with('written', () => updateContacts(p).where(sql<boolean>`c.xmin = ${p.version}::text::xid`).returning('c.id'))
    .insertInto('outbox_events')
    .columns(EVENT_COLUMNS)
    .expression((eb) => eventRows(p.events, eb.selectFrom('written').select(ONE)))
    .returning('id'),
);

export const FIND_BY_EMAIL = statement<{ orgId: string; email: string }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .select(contactColumnsOf('c'))
    .where('c.organization_id', '=', p.orgId)
    .where('c.email', '=', p.email)
    .where('c.deleted_at', 'is', null)
    .limit(sql.lit(1)),
);
