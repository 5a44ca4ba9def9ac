import type { FormField } from '../forms/schemas.ts';
import { unstorableReason } from '../validation/index.ts';

/** Universal lead-capture submissions kept per workspace per hour (the spec's limit); beyond it 429 rate_limited. */
export const LEAD_CAPTURES_PER_HOUR = 100;
/** The largest body accepted: a plain form of 50 fields with a long message fits; the universal form's are < 1 KB. */
export const CAPTURE_MAX_BYTES = 32 * 1024;
/** Fields of a captured page form beyond the email; more is not a lead form. */
export const MAX_PAGE_FIELDS = 50;
const MAX_KEY = 100;

export const UNIVERSAL_FORM_NAME = 'Universal lead capture';
export const PAGE_FORM_NAME = 'Website form';

/** The form the script renders: its field ids are the keys its submissions carry. */
export const UNIVERSAL_FIELDS: readonly FormField[] = [
  { id: 'name', label: 'Name', type: 'text', required: false },
  { id: 'email', label: 'Email', type: 'email', required: true },
  { id: 'phone', label: 'Phone', type: 'tel', required: false },
  { id: 'message', label: 'Message', type: 'textarea', required: false },
];

/** The capture's own reserved keys, beside the forms' (`_hp_field`, `utm_*`, `_referrer`, `_landingPage`). */
export const FORM_KEY = '_form';

/**
 * Keys that are the page's own bookkeeping rather than answers: a leading `_` (CSRF tokens such as Laravel's `_token`,
 * WordPress's `_wpnonce`, and the reserved keys), `utm_*`, and CAPTCHA tokens.
 */
const NOT_AN_ANSWER = /^(_|utm_|g-recaptcha-response$|cf-turnstile-response$|h-captcha-response$)/i;

/**
 * The fields of a plain page form, read from the keys it sent: `email` (required; the script sends the form's email
 * input under that key) and every other answer as free text. Keys too long or too many are reported, not dropped.
 */
export function pageFormFields(body: Record<string, unknown>): { fields: FormField[]; problems: { path: string; message: string }[] } {
  const fields: FormField[] = [{ id: 'email', label: 'Email', type: 'email', required: true }];
  const problems: { path: string; message: string }[] = [];
  for (const key of Object.keys(body)) {
    if (key === 'email' || NOT_AN_ANSWER.test(key)) continue;
    if (key.length > MAX_KEY || key.trim() === '' || unstorableReason(key)) {
      problems.push({ path: key.slice(0, MAX_KEY), message: `a field name must be 1-${MAX_KEY} characters of storable text` });
    } else if (fields.length > MAX_PAGE_FIELDS) {
      problems.push({ path: key, message: `at most ${MAX_PAGE_FIELDS} fields besides the email are captured` });
      break;
    } else fields.push({ id: key, label: key, type: 'textarea', required: false });
  }
  return { fields, problems };
}
