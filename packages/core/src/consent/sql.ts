import { qb, sql, statement } from '@leadwire/db';

/** Statements of consent (consent/service.ts, keys.ts), in one place. Times come in as parameters from `deps.clock`. */

export const KEY_OF = statement<{ orgId: string }>()((p) =>
  qb.selectFrom('consent_keys').select('key').where('organization_id', '=', p.orgId),
);

export const CREATE_KEY = statement<{ orgId: string; key: string }>()((p) =>
  qb
    .insertInto('consent_keys')
    .values({ organization_id: p.orgId, key: p.key })
    .onConflict((oc) => oc.column('organization_id').doNothing()),
);

const ENTRY = [
  'id',
  'contact_id',
  'purpose',
  'status',
  'method',
  'text',
  'version',
  'form_id',
  'form_name',
  'page_url',
  'ip_hash',
  'expires_at',
  'confirms',
  'created_at',
] as const;

export interface InsertEntryParams {
  id: string;
  orgId: string;
  contactId: string;
  purpose: string;
  status: 'granted' | 'declined' | 'pending' | 'withdrawn';
  method: 'single_opt_in' | 'double_opt_in' | 'unsubscribe_link';
  text: string | null;
  version: string | null;
  formId: string | null;
  formName: string | null;
  pageUrl: string | null;
  ipHash: string | null;
  expiresAt: Date | null;
  confirms: string | null;
  now: Date;
}

/** A confirmation confirms once: a second (a double click, a retried request) inserts nothing. */
export const INSERT_ENTRY = statement<InsertEntryParams>()((p) =>
  qb
    .insertInto('consent_entries')
    .values({
      id: p.id,
      organization_id: p.orgId,
      contact_id: p.contactId,
      purpose: p.purpose,
      status: p.status,
      method: p.method,
      text: p.text,
      version: p.version,
      form_id: p.formId,
      form_name: p.formName,
      page_url: p.pageUrl,
      ip_hash: p.ipHash,
      expires_at: p.expiresAt,
      confirms: p.confirms,
      created_at: p.now,
    })
    .onConflict((oc) => oc.column('confirms').doNothing())
    .returning(ENTRY),
);
export type EntryRow = NonNullable<(typeof INSERT_ENTRY)['row']>;

/** A contact's entries, newest first; the contact must be one of the organization's (live or in the trash). */
export const ENTRIES_OF = statement<{ orgId: string; contactId: string; limit: number }>()((p) =>
  qb
    .selectFrom('consent_entries')
    .select(ENTRY)
    .where('organization_id', '=', p.orgId)
    .where('contact_id', '=', p.contactId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(p.limit),
);

/** What decides each purpose now: the latest grant or withdrawal. */
export const DECIDING = statement<{ orgId: string; contactId: string }>()((p) =>
  qb
    .selectFrom('consent_entries')
    .distinctOn('purpose')
    .select(ENTRY)
    .where('organization_id', '=', p.orgId)
    .where('contact_id', '=', p.contactId)
    .where('status', 'in', [sql.lit('granted' as const), sql.lit('withdrawn' as const)])
    .orderBy('purpose')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc'),
);

/** Pending entries a confirmation link names, each with whether it is confirmed already; rows locked for the confirmation. */
export const PENDING = statement<{ orgId: string; ids: string[] }>()((p) =>
  qb
    .selectFrom('consent_entries as e')
    .select((eb) => [
      ...ENTRY.map((c) => `e.${c}` as const),
      eb.exists(eb.selectFrom('consent_entries as c').select(sql.lit(1).as('one')).whereRef('c.confirms', '=', 'e.id')).as('confirmed'),
    ])
    .where('e.organization_id', '=', p.orgId)
    .where('e.id', '=', (eb) => eb.fn.any(sql<string[]>`${p.ids}::uuid[]`))
    .where('e.status', '=', sql.lit('pending' as const))
    .orderBy('e.purpose')
    .forUpdate('e'),
);

/** The contact a link is about, with what its mail and events need; the organization's name for the pages. */
export const CONTACT = statement<{ orgId: string; contactId: string }>()((p) =>
  qb
    .selectFrom('contacts as c')
    .innerJoin('organizations as o', 'o.id', 'c.organization_id')
    .select(['c.id', 'c.email', 'c.first_name', 'o.name as org_name'])
    .where('c.organization_id', '=', p.orgId)
    .where('c.id', '=', p.contactId)
    .where('c.deleted_at', 'is', null),
);

export const ORG_NAME = statement<{ orgId: string }>()((p) => qb.selectFrom('organizations').select('name').where('id', '=', p.orgId));

/** The contact's own consent flags follow the purposes they stand for (the application shows and uses them). */
export const SET_EMAIL_CONSENT = statement<{ orgId: string; contactId: string; granted: boolean }>()((p) =>
  qb.updateTable('contacts').set({ email_consent: p.granted }).where('organization_id', '=', p.orgId).where('id', '=', p.contactId),
);
export const SET_SMS_CONSENT = statement<{ orgId: string; contactId: string; granted: boolean }>()((p) =>
  qb.updateTable('contacts').set({ sms_consent: p.granted }).where('organization_id', '=', p.orgId).where('id', '=', p.contactId),
);

/** Whether a confirmation mail went to the contact lately: a pending entry of another submission since `since`. */
export const RECENT_PENDING = statement<{ orgId: string; contactId: string; since: Date; ids: string[] }>()((p) =>
  qb
    .selectFrom('consent_entries')
    .select('id')
    .where('organization_id', '=', p.orgId)
    .where('contact_id', '=', p.contactId)
    .where('status', '=', sql.lit('pending' as const))
    .where('created_at', '>=', p.since)
    .where((eb) => eb.not(eb('id', '=', eb.fn.any(sql<string[]>`${p.ids}::uuid[]`))))
    .limit(1),
);
