import { baseScore, finalScore } from '../../scoring/score.ts';
import type { ContactRow } from './row.ts';
import type { ContactUpsertInput } from '../v1/schemas.ts';

/** An upsert row after validation, with its company resolved. `companyId` undefined means "not sent". */
export interface ResolvedRow {
  input: ContactUpsertInput;
  companyId: string | null | undefined;
  /** Source for a new contact: the row's own, else the X-Source header, else `api`. */
  source: string;
  /** A score given by the caller (POST /v1/leads): stored as the manual override, which wins over the computed one. */
  scoreOverride?: number | undefined;
}

/** Adds tags not yet present, comparing case-insensitively; the stored spelling of a tag wins. */
export function unionTags(existing: readonly string[], added: readonly string[] | undefined): string[] {
  if (!added?.length) return [...existing];
  const seen = new Set(existing.map((t) => t.toLowerCase()));
  const out = [...existing];
  for (const t of added) {
    const k = t.toLowerCase();
    if (!seen.has(k)) {
      seen.add(k);
      out.push(t);
    }
  }
  return out;
}

/** Custom data merges key by key; a key sent as null is removed. */
export function mergeCustom(existing: Record<string, unknown>, sent: Record<string, unknown> | undefined) {
  if (!sent) return existing;
  const out = { ...existing };
  for (const [k, v] of Object.entries(sent)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** `undefined` keeps the stored value; anything else, null included, replaces it. */
export const pick = <T>(sent: T | undefined, stored: T): T => (sent === undefined ? stored : sent);

export function scoreOf(c: ContactRow): number {
  const base = baseScore({
    email: c.email,
    phone: c.phone,
    hasCompany: c.company_id !== null,
    jobTitle: c.job_title,
    website: c.website,
    linkedin: c.linkedin,
    source: c.source,
    hasBooking: c.has_booking === true,
  });
  return finalScore(base, c.score_adjustment, c.score_override);
}

/** A contact with nothing known yet but its origin: the starting point of every new contact. */
export function blankContact(orgId: string, id: string, source: string, now: Date): ContactRow {
  return {
    id,
    organization_id: orgId,
    email: null,
    first_name: null,
    last_name: null,
    phone: null,
    job_title: null,
    website: null,
    linkedin: null,
    tags: [],
    custom: {},
    source,
    lead_score: 0,
    score_adjustment: 0,
    score_override: null,
    stage: 'lead',
    company_id: null,
    email_consent: false,
    sms_consent: false,
    deleted_at: null,
    created_at: now,
    updated_at: now,
  };
}

/** A brand-new contact built from its first upsert row. */
export function newContact(orgId: string, id: string, row: ResolvedRow, now: Date): ContactRow {
  const blank = blankContact(orgId, id, row.source, now);
  return applyRow(blank, row, now);
}

/**
 * Upsert rule 4 on one stored contact: fields sent overwrite, tags are only added, custom keys merge, and an existing
 * email is never replaced. Source is not touched here: it belongs to new contacts only (rule 7). Consent is never
 * touched at all (rule 8).
 */
export function applyRow(stored: ContactRow, row: ResolvedRow, now: Date): ContactRow {
  const i = row.input;
  const next: ContactRow = {
    ...stored,
    email: stored.email ?? i.email ?? null,
    first_name: pick(i.firstName, stored.first_name),
    last_name: pick(i.lastName, stored.last_name),
    phone: pick(i.phone, stored.phone),
    job_title: pick(i.title, stored.job_title),
    company_id: pick(row.companyId, stored.company_id),
    tags: unionTags(stored.tags, i.tags),
    custom: mergeCustom(stored.custom, i.custom),
    score_override: row.scoreOverride ?? stored.score_override,
    updated_at: now,
  };
  next.lead_score = scoreOf(next);
  return next;
}

/** True when a change touched what the score adjuster looks at. */
export function scoreInputsChanged(a: ContactRow, b: ContactRow): boolean {
  return (
    a.email !== b.email ||
    a.phone !== b.phone ||
    a.company_id !== b.company_id ||
    a.job_title !== b.job_title ||
    a.website !== b.website ||
    a.linkedin !== b.linkedin ||
    a.source !== b.source ||
    a.first_name !== b.first_name ||
    a.last_name !== b.last_name
  );
}
