import { createHash } from 'node:crypto';
import { AppError, errors, type Issue } from '../errors.ts';
import { acceptSubmission, type IntakeDeps, type PublishedForm, type ThankYou } from '../forms/intake.ts';
import { enforceRateLimit } from '../limits/rate-limit.ts';
import { visitorIdOf } from '../tracking/schemas.ts';
import { unstorableReason } from '../validation/index.ts';
import {
  CAPTURE_MAX_BYTES,
  FORM_KEY,
  LEAD_CAPTURES_PER_HOUR,
  PAGE_FORM_NAME,
  pageFormFields,
  UNIVERSAL_FIELDS,
  UNIVERSAL_FORM_NAME,
} from './schemas.ts';
import * as q from './sql.ts';

export const captureErrors = {
  tooLarge: () => new AppError('payload_too_large', `A lead-capture body is at most ${CAPTURE_MAX_BYTES} bytes`),
  mediaType: () =>
    new AppError('unsupported_media_type', 'Send the submission as a JSON object with Content-Type text/plain or application/json (UTF-8)'),
  malformed: () => new AppError('malformed_json', 'The body is not UTF-8 JSON'),
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HOUR_MS = 3_600_000;
const FORM_NAME_MAX = 100;
/** `fatal`: bytes that are not UTF-8 are refused rather than stored as U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A capture body as sent (text/plain by sendBeacon and the script's fetch, or application/json): a UTF-8 JSON object. */
export function parseCaptureBody(bytes: Uint8Array): Record<string, unknown> {
  if (bytes.length > CAPTURE_MAX_BYTES) throw captureErrors.tooLarge();
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    throw captureErrors.malformed();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw errors.validation(
      [{ path: '', message: 'The body must be a JSON object of field names to values' }],
      'Validation failed: the body must be a JSON object',
    );
  }
  return value as Record<string, unknown>;
}

/**
 * The id `form.submitted` carries for a captured form: no forms record exists, so it is derived from the workspace and
 * the form's name (a name-based UUID, version 8), the same for every capture of that form: receivers can group by it.
 */
export function captureFormId(orgId: string, name: string): string {
  const h = createHash('sha256').update(`leadwire-lead-capture\0${orgId}\0${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export interface CaptureClient {
  ip: string | undefined;
  setHeader: (name: string, value: string | number) => void;
}

/** Counts a submission about to be kept in the workspace's hourly window and refuses it past the limit. */
async function admitCapture(deps: IntakeDeps, orgId: string, client: CaptureClient): Promise<void> {
  const now = deps.clock.now();
  const start = new Date(now.getTime() - (now.getTime() % HOUR_MS));
  const [row] = await deps.db.run(q.COUNT_CAPTURE, { bucket: `capture:${orgId}`, windowStart: start });
  enforceRateLimit({ count: row?.count ?? 1, resetAt: new Date(start.getTime() + HOUR_MS) }, LEAD_CAPTURES_PER_HOUR, client.setHeader, now);
}

/** The form a body belongs to: a page form when it names one in `_form` (empty: "Website form"), else the universal one. */
function formOf(body: Record<string, unknown>): { name: string; fields: PublishedForm['fields']; issues: Issue[] } {
  const named = body[FORM_KEY];
  if (named === undefined || named === null) return { name: UNIVERSAL_FORM_NAME, fields: [...UNIVERSAL_FIELDS], issues: [] };
  const { fields, problems } = pageFormFields(body);
  if (typeof named !== 'string' || named.length > FORM_NAME_MAX || unstorableReason(named)) {
    return {
      name: PAGE_FORM_NAME,
      fields,
      issues: [{ path: FORM_KEY, message: `${FORM_KEY} must be a form name of at most ${FORM_NAME_MAX} characters` }, ...problems],
    };
  }
  return { name: named.trim() || PAGE_FORM_NAME, fields, issues: problems };
}

/**
 * A submission from the lead-capture script: the universal form it renders, or a plain page form it captured. It goes
 * through the forms' own intake (reserved keys, honeypot, contact created with source `form` or matched by email,
 * pipeline by the lead router, `form.submitted`) as a form with no stored record. Only submissions about to be kept
 * count against the workspace's 100 an hour; an unknown workspace is 404.
 */
export async function captureLead(
  deps: IntakeDeps,
  orgId: string,
  body: Record<string, unknown>,
  client: CaptureClient,
): Promise<ThankYou> {
  const [org] = UUID.test(orgId) ? await deps.db.run(q.CAPTURE_ORG, { orgId: orgId.toLowerCase() }) : [];
  if (!org) throw errors.notFound(`No workspace with id ${orgId}`);
  const { name, fields, issues } = formOf(body);
  const now = deps.clock.now();
  const form: PublishedForm = {
    id: captureFormId(org.id, name),
    organization_id: org.id,
    name,
    fields,
    published: true,
    pipeline_id: null,
    captcha_provider: null,
    captcha_site_key: null,
    captcha_secret: null,
    thank_you_message: null,
    redirect_url: null,
    // The universal form asks no consent: a lead capture records none.
    consent: null,
    created_at: now,
    updated_at: now,
    plan: org.plan,
    contact_booster: org.contact_booster,
  };
  return acceptSubmission(deps, form, body, client, {
    detached: true,
    visitorId: visitorIdOf(body),
    issues,
    admit: () => admitCapture(deps, org.id, client),
  });
}
