import { rescored } from './apply.ts';
import { unionTags } from '../shared/apply.ts';
import type { AppContactRow } from './row.ts';

/** Fields a duplicate may fill on the primary when the primary's is blank. */
const FILLABLE = ['first_name', 'last_name', 'job_title', 'website', 'linkedin', 'company_id', 'score_override'] as const;

const blank = (v: unknown) => v === null || v === undefined || v === '';

/**
 * The primary after a merge (spec "Contact merge"): it keeps every value it has and only fills blank fields, from the
 * duplicates in the order given. Consent travels with its channel: an email or phone taken from a duplicate brings
 * that duplicate's consent for it, while the primary's own channels keep the primary's consent. Tags are united;
 * custom keys the primary lacks are added. Stage, source and creation time are the primary's.
 */
export function mergeFields(primary: AppContactRow, duplicates: readonly AppContactRow[], now: Date): AppContactRow {
  const out: AppContactRow = { ...primary };
  for (const k of FILLABLE) {
    if (!blank(out[k])) continue;
    const donor = duplicates.find((d) => !blank(d[k]));
    if (donor) (out as unknown as Record<string, unknown>)[k] = donor[k];
  }
  if (blank(out.email)) {
    const donor = duplicates.find((d) => !blank(d.email));
    if (donor) Object.assign(out, { email: donor.email, email_consent: donor.email_consent });
  }
  if (blank(out.phone)) {
    const donor = duplicates.find((d) => !blank(d.phone));
    if (donor) Object.assign(out, { phone: donor.phone, sms_consent: donor.sms_consent });
  }
  // The duplicates' bookings move to the primary, and their booking bonus with them.
  out.has_booking = primary.has_booking === true || duplicates.some((d) => d.has_booking === true);
  out.tags = duplicates.reduce((tags, d) => unionTags(tags, d.tags), primary.tags);
  // Earlier duplicates win over later ones, the primary over all.
  out.custom = Object.assign({}, ...[...duplicates].reverse().map((d) => d.custom), primary.custom);
  return rescored(out, now);
}
