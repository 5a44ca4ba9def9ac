import { HAS_BOOKING } from '../shared/sql.ts';

/**
 * Statements of the application's contact operations. Placeholders are `?`; lists travel as one JSON parameter.
 * Every statement names the organization, so an id from another organization behaves exactly like an unknown one.
 */

export const WITH_COMPANY = `
select c.*, ${HAS_BOOKING}, co.name as company_name, co.domain as company_domain
from contacts c left join companies co on co.id = c.company_id`;

export const GET_LIVE = `${WITH_COMPANY} where c.id = ? and c.organization_id = ? and c.deleted_at is null`;

/** Rows that a write rescores carry `has_booking`, which `scoreOf` reads (the booking bonus). */
export const LOCK_LIVE = `select c.*, ${HAS_BOOKING} from contacts c where c.id = ? and c.organization_id = ? and c.deleted_at is null for update of c`;

export const LOCK_ANY = `select c.*, ${HAS_BOOKING} from contacts c where c.id = ? and c.organization_id = ? for update of c`;

export const FIND_LIVE_EMAIL = `select id from contacts where organization_id = ? and email = ? and deleted_at is null and id <> ? limit 1`;

export const FIND_COMPANY = `select id from companies where id = ? and organization_id = ?`;

const RECORD = `v(id uuid, organization_id uuid, email text, first_name text, last_name text, phone text, job_title text,
  website text, linkedin text, tags text[], custom jsonb, source text, lead_score int, score_adjustment int,
  score_override int, stage text, company_id uuid, email_consent boolean, sms_consent boolean, created_at timestamptz,
  updated_at timestamptz)`;

/** The partial unique index decides a race between two creates of one email: the loser inserts nothing. */
export const INSERT_CONTACT = `
insert into contacts (id, organization_id, email, first_name, last_name, phone, job_title, website, linkedin, tags,
  custom, source, lead_score, score_adjustment, score_override, stage, company_id, email_consent, sms_consent,
  created_at, updated_at)
select v.id, v.organization_id, v.email, v.first_name, v.last_name, v.phone, v.job_title, v.website, v.linkedin, v.tags,
  v.custom, v.source, v.lead_score, v.score_adjustment, v.score_override, v.stage, v.company_id, v.email_consent,
  v.sms_consent, v.created_at, v.updated_at
from jsonb_to_record(?::jsonb) as ${RECORD}
on conflict (organization_id, email) where deleted_at is null and email is not null do nothing
returning id`;

/** Writes every column a user can change; source and created_at never change after creation. */
export const WRITE_CONTACT = `
update contacts c set email = v.email, first_name = v.first_name, last_name = v.last_name, phone = v.phone,
  job_title = v.job_title, website = v.website, linkedin = v.linkedin, tags = v.tags, custom = v.custom,
  lead_score = v.lead_score, score_override = v.score_override, stage = v.stage, company_id = v.company_id,
  email_consent = v.email_consent, sms_consent = v.sms_consent, updated_at = v.updated_at
from jsonb_to_record(?::jsonb) as ${RECORD}
where c.id = v.id and c.organization_id = ?`;

export const TRASH = `update contacts set deleted_at = ?, updated_at = ? where id = ?`;
export const UNTRASH = `update contacts set deleted_at = null, updated_at = ? where id = ?`;
