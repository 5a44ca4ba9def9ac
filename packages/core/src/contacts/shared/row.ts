import type { EventContact } from '../../events/payload.ts';
import type { ContactView } from '../v1/schemas.ts';
import type { ContactRecord } from './columns.ts';

/** A contacts row as statements return it (every column, typed from the entity). */
export interface ContactRow extends ContactRecord {
  /** Whether a confirmed booking exists (the +20 bonus); selected by the queries that feed `scoreOf`. */
  has_booking?: boolean;
}

export function toContactView(r: ContactRow): ContactView {
  return {
    id: r.id,
    email: r.email,
    firstName: r.first_name,
    lastName: r.last_name,
    phone: r.phone,
    jobTitle: r.job_title,
    tags: r.tags,
    leadScore: r.lead_score,
    stage: r.stage,
  };
}

/** The contact as it appears in event payloads (`data.contact`) and in /v1's contact reads. */
export function toEventContact(r: ContactRow): EventContact {
  return {
    ...toContactView(r),
    source: r.source,
    companyId: r.company_id,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}
