import type { EventSource, PendingEvent } from '../../events/outbox.ts';
import type { EventName } from '../../events/names.ts';
import { blankContact, mergeCustom, pick, scoreOf, unionTags } from '../shared/apply.ts';
import type { AppContactRow } from './row.ts';
import type { ContactCreateInput, ContactUpdateInput } from './schemas.ts';
import { toEventContact } from '../shared/row.ts';

/** What a user can write on a contact; `undefined` keeps the stored value, null clears it. */
type Patch = Omit<ContactUpdateInput, 'id'>;

/** Every write ends here, so the stored score always follows the data it is computed from. */
export function rescored(row: AppContactRow, now: Date): AppContactRow {
  return { ...row, lead_score: scoreOf(row), updated_at: now };
}

export function applyPatch(stored: AppContactRow, p: Patch, now: Date): AppContactRow {
  return rescored(
    {
      ...stored,
      email: pick(p.email, stored.email),
      first_name: pick(p.firstName, stored.first_name),
      last_name: pick(p.lastName, stored.last_name),
      phone: pick(p.phone, stored.phone),
      job_title: pick(p.jobTitle, stored.job_title),
      website: pick(p.website, stored.website),
      linkedin: pick(p.linkedin, stored.linkedin),
      company_id: pick(p.companyId, stored.company_id),
      custom: mergeCustom(stored.custom, p.custom),
      email_consent: pick(p.emailConsent, stored.email_consent),
      sms_consent: pick(p.smsConsent, stored.sms_consent),
    },
    now,
  );
}

export function withoutTags(stored: readonly string[], removed: readonly string[]): string[] {
  const gone = new Set(removed.map((t) => t.toLowerCase()));
  return stored.filter((t) => !gone.has(t.toLowerCase()));
}

export function newAppContact(orgId: string, id: string, input: ContactCreateInput, now: Date): AppContactRow {
  const blank: AppContactRow = {
    ...blankContact(orgId, id, input.source ?? 'manual', now),
    tags: unionTags([], input.tags ?? []),
    stage: input.stage ?? 'lead',
  };
  return applyPatch(blank, input, now);
}

/** Columns a user-visible change can touch; updated_at and lead_score follow from them. */
const COMPARED = [
  'email',
  'first_name',
  'last_name',
  'phone',
  'job_title',
  'website',
  'linkedin',
  'company_id',
  'stage',
  'score_override',
  'email_consent',
  'sms_consent',
] as const satisfies readonly (keyof AppContactRow)[];

export function hasChanged(a: AppContactRow, b: AppContactRow): boolean {
  return (
    COMPARED.some((k) => a[k] !== b[k]) ||
    a.lead_score !== b.lead_score ||
    JSON.stringify(a.tags) !== JSON.stringify(b.tags) ||
    JSON.stringify(a.custom) !== JSON.stringify(b.custom)
  );
}

/**
 * The events one write emits, in order: `contact.updated` when anything changed, then `contact.stage_changed` (with
 * `previousStage`), one `contact.tag_added` per tag gained (with `tag`) when `tagEvents` is set, and
 * `contact.score_changed` (with `previousScore`) whenever the visible score moved.
 */
export function changeEvents(
  before: AppContactRow,
  after: AppContactRow,
  now: Date,
  opts: { tagEvents?: boolean; extra?: Record<string, unknown>; source?: EventSource } = {},
): PendingEvent[] {
  if (!hasChanged(before, after)) return [];
  const contact = toEventContact(after);
  const ev = (event: EventName, data: Record<string, unknown> = {}): PendingEvent => ({
    orgId: after.organization_id,
    event,
    source: opts.source ?? 'app',
    data: { contact, ...data },
    at: now,
  });
  const out = [ev('contact.updated', opts.extra)];
  if (before.stage !== after.stage) out.push(ev('contact.stage_changed', { previousStage: before.stage }));
  if (opts.tagEvents) {
    const had = new Set(before.tags.map((t) => t.toLowerCase()));
    for (const tag of after.tags) if (!had.has(tag.toLowerCase())) out.push(ev('contact.tag_added', { tag }));
  }
  if (before.lead_score !== after.lead_score) out.push(ev('contact.score_changed', { previousScore: before.lead_score }));
  return out;
}
