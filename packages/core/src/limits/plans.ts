import type { Plan } from '@leadwire/db';

/** Contacts per organization by plan (spec "Limits"); the booster add-on adds to these. */
export const CONTACT_CAPS: Record<Plan, number> = { starter: 10_000, pro: 25_000, max: 100_000 };

export function contactCap(plan: Plan, booster: number): number {
  return CONTACT_CAPS[plan] + Math.max(0, booster);
}

/** Public API keys: 600 requests per minute per key, whatever the plan. */
export const PUBLIC_API_PER_MINUTE = 600;

/** Internal keys by plan (spec "Limits"): per minute and per day. */
export const INTERNAL_KEY_LIMITS: Record<Plan, { perMinute: number; perDay: number }> = {
  starter: { perMinute: 60, perDay: 10_000 },
  pro: { perMinute: 120, perDay: 50_000 },
  max: { perMinute: 300, perDay: 200_000 },
};

/**
 * Form submissions (spec: left open). Per form and client address, 10 a minute: more than a person retyping, few
 * enough that a script from one address gets nowhere. Per form, 300 a minute from everyone: a ceiling on what a
 * distributed flood can write, well above a popular form's real traffic.
 */
export const FORM_SUBMITS_PER_ADDRESS_PER_MINUTE = 10;
export const FORM_SUBMITS_PER_FORM_PER_MINUTE = 300;

/**
 * Workflow intake (spec: left open): 60 runs a minute per workflow, one a second. Each run may text a contact and
 * write several records, so a leaked or looping intake URL is held to a pace a person can notice and stop (rotate the
 * token, disable the workflow); a real event source (sign-ups, a platform's batch) rarely needs more.
 */
export const WORKFLOW_RUNS_PER_WORKFLOW_PER_MINUTE = 60;
