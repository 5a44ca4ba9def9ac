import { type ContactRow, toContactView } from '../shared/row.ts';
import type { AppContact } from './schemas.ts';
import type { GET_LIVE } from './sql.ts';
import { iso } from '../../records/dates.ts';

type Joined = NonNullable<(typeof GET_LIVE)['row']>;

/** A contacts row, with its company when the statement joined it. */
export interface AppContactRow extends ContactRow, Partial<Pick<Joined, 'company_name' | 'company_domain'>> {}

/** Days a contact stays in trash before the nightly purge may delete it (spec "Limits"). */
export const TRASH_DAYS = 30;
const DAY_MS = 86_400_000;

/** The instant before which a trashed contact is past the restore window and due for purging. */
export const trashCutoff = (now: Date) => new Date(now.getTime() - TRASH_DAYS * DAY_MS);
export const purgeAfter = (deletedAt: Date | string) => new Date(new Date(deletedAt).getTime() + TRASH_DAYS * DAY_MS);
/** Whole days, rounded up, until the restore window closes: the console's "days left", by the server's clock. */
export const daysLeft = (deletedAt: Date | string, now: Date) =>
  Math.max(0, Math.ceil((purgeAfter(deletedAt).getTime() - now.getTime()) / DAY_MS));

export function toAppContact(r: AppContactRow): AppContact {
  return {
    ...toContactView(r),
    website: r.website,
    linkedin: r.linkedin,
    custom: r.custom,
    source: r.source,
    scoreOverride: r.score_override,
    company: r.company_id && r.company_domain ? { id: r.company_id, name: r.company_name ?? null, domain: r.company_domain } : null,
    emailConsent: r.email_consent,
    smsConsent: r.sms_consent,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}
