import { qb, sql, statement } from '@leadwire/db';
import { type EnvelopeCall, envelopeArguments, type EnvelopeRow } from '../../auth/envelope-sql.ts';

/**
 * The single contact upsert by email as one call of `leadwire_v1_contacts_upsert` (Migration20261128150000), hence one
 * round trip and one transaction: the key confirmed by id, the Idempotency-Key's lock and stored answer, the company
 * of `companyDomain`, the organization's room under its contact cap, the insert-or-merge of the contact (rule 4), its
 * events in the outbox, the counter, the stored answer, and the request's count in the key's window. Nothing is
 * written unless the key stands, its window had room, its Idempotency-Key is free, the company exists when named and
 * the organization is far from its cap; no contact comes back when the function left it to the TypeScript path.
 */
export interface UpsertOneParams extends EnvelopeCall {
  orgId: string;
  /** The new contact (newContact in apply.ts) as JSON; its company and score are computed by the function. */
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
  /** `{ plan: cap }` (limits/plans.ts), and how far below its cap an organization admits without locking its counter. */
  caps: string;
  margin: number;
  eventSource: string | null;
  /** `now` as ISO 8601 with milliseconds: the events' timestamp and the contact's updatedAt in them. */
  at: string;
  requestId: string | null;
}

/** The function's answer: the envelope's, then the contact's. */
type UpsertOneRow = EnvelopeRow & { far: boolean | null; company_missing: boolean | null; id: string | null; created: boolean | null };

/** The arguments both contact writes pass, in the functions' order: the envelope's, then the contact's. */
export const contactArguments = (p: UpsertOneParams) =>
  sql`${envelopeArguments(p)}, ${p.orgId}::uuid, ${p.row}::jsonb, ${p.sent}::text[], ${p.tags}::text[], ${p.tagsLower}::text[],
    ${p.custom}::jsonb, ${p.override}::int, ${p.domain}::text, ${p.caps}::jsonb, ${p.margin}::int, ${p.eventSource}::text, ${p.at}::text,
    ${p.requestId}::text`;

export const UPSERT_ONE = statement<UpsertOneParams>()((p) =>
  qb
    .selectFrom(sql<UpsertOneRow>`leadwire_v1_contacts_upsert(${contactArguments(p)})`.as('r'))
    .select(['r.key_ok', 'r.hits', 'r.locked', 'r.prior_hash', 'r.prior_response', 'r.far', 'r.company_missing', 'r.id', 'r.created']),
);
