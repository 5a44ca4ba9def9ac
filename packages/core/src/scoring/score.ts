/**
 * Lead score: a deterministic base from contact data, nudged by an (optional) AI
 * adjustment, and overridable by a human. Always an integer in 0..100.
 */

export const MIN_SCORE = 0;
export const MAX_SCORE = 100;
/** Largest move, up or down, the AI step may make to the base score. */
export const MAX_ADJUSTMENT = 15;

export interface ScoreInputs {
  email?: string | null;
  phone?: string | null;
  hasCompany?: boolean;
  jobTitle?: string | null;
  website?: string | null;
  linkedin?: string | null;
  source?: string | null;
  hasBooking?: boolean;
}

/**
 * Contact fields whose change can alter the base score. Callers compare this with
 * the fields touched by an update to decide whether to recompute. A new booking is
 * not a contact field, so booking creation must trigger a recompute on its own.
 */
export const SCORE_FIELDS = Object.freeze(['email', 'phone', 'company', 'jobTitle', 'website', 'linkedin', 'source'] as const);

/** The weights, exported for the one place that computes the same score in SQL (contacts/shared/score-sql.ts). */
export const WEIGHT_EMAIL = 15;
export const WEIGHT_PHONE = 10;
export const WEIGHT_COMPANY = 15;
export const WEIGHT_JOB_TITLE = 10;
export const WEIGHT_WEB_PRESENCE = 5;
export const BOOKING_BONUS = 20;

// A Map rather than an object literal: `source` is free text, and a plain-object
// lookup would resolve keys like "constructor" to inherited prototype members.
export const SOURCE_BONUS: ReadonlyMap<string, number> = new Map([
  ['booking', BOOKING_BONUS],
  ['referral', 15],
  ['form', 10],
  ['manual', 0],
]);

function present(value: string | null | undefined): boolean {
  return typeof value === 'string' && value.trim() !== '';
}

function sourceBonus(source: string | null | undefined, hasBooking: boolean): number {
  const key = typeof source === 'string' ? source.trim().toLowerCase() : '';
  const fromSource = SOURCE_BONUS.get(key) ?? 0;
  // There is a single source bonus, not a sum: a referral that later books is
  // worth the booking bonus, and source "booking" plus a booking still counts once.
  return hasBooking ? Math.max(fromSource, BOOKING_BONUS) : fromSource;
}

export function baseScore(i: ScoreInputs): number {
  let score = 0;
  if (present(i.email)) score += WEIGHT_EMAIL;
  if (present(i.phone)) score += WEIGHT_PHONE;
  if (i.hasCompany === true) score += WEIGHT_COMPANY;
  if (present(i.jobTitle)) score += WEIGHT_JOB_TITLE;
  if (present(i.website) || present(i.linkedin)) score += WEIGHT_WEB_PRESENCE;
  score += sourceBonus(i.source, i.hasBooking === true);
  return clampScore(score);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function clampScore(value: number): number {
  return clamp(Math.round(value), MIN_SCORE, MAX_SCORE);
}

/** Rounds and bounds an AI adjustment; NaN (a broken adjuster) means "no adjustment". */
export function clampAdjustment(adjustment: number): number {
  if (Number.isNaN(adjustment)) return 0;
  // `+ 0` turns the -0 that Math.round produces for small negatives into 0.
  return clamp(Math.round(adjustment), -MAX_ADJUSTMENT, MAX_ADJUSTMENT) + 0;
}

export function finalScore(base: number, adjustment: number, manualOverride: number | null | undefined): number {
  // NaN is treated as "no override" rather than clamped to some arbitrary bound.
  if (manualOverride != null && !Number.isNaN(manualOverride)) return clampScore(manualOverride);
  const safeBase = Number.isNaN(base) ? 0 : base;
  return clampScore(safeBase + clampAdjustment(adjustment));
}
