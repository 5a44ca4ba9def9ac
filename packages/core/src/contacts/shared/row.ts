import type { ContactView } from '../v1/schemas.ts';

/** A contacts row as raw SQL returns it. */
export interface ContactRow {
  id: string;
  organization_id: string;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  job_title: string | null;
  website: string | null;
  linkedin: string | null;
  tags: string[];
  custom: Record<string, unknown>;
  source: string;
  lead_score: number;
  score_adjustment: number;
  score_override: number | null;
  stage: string;
  company_id: string | null;
  created_at: Date | string;
  updated_at: Date | string;
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

/** The contact as it appears in event payloads (`data.contact`). */
export function toEventContact(r: ContactRow): Record<string, unknown> {
  return {
    ...toContactView(r),
    source: r.source,
    companyId: r.company_id,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}
