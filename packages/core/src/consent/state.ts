import { type Expression, qb, sql } from '@leadwire/db';
import { iso } from '../records/dates.ts';
import type { ContactConsent, ConsentState } from './schemas.ts';

/** One purpose's row of `consentStateOf`: what its JSON holds (timestamps as text, from `to_jsonb`). */
export interface ConsentStateRow {
  purpose: string;
  status: 'granted' | 'declined' | 'pending' | 'withdrawn';
  method: ConsentState['method'];
  version: string | null;
  expires_at: string | null;
  created_at: string;
}

/**
 * A contact's consent now, as a scalar subquery for the contact read's own statement (one statement, one snapshot: a
 * replica-routed read never pairs a contact with consent of another moment): per purpose, the entry that says what
 * holds, as a JSON array (`[]` without entries). That entry is the latest grant or withdrawal, as for
 * `GET /contacts/{id}/consents` and the contact's own flags; only a purpose with neither takes its latest answer
 * (pending or declined): a box left unticked on a later form withdraws nothing. The contact's entries are found by
 * consent_entries_contact_idx (contact_id, created_at); a person answers a few questions a year, so the sort is small.
 */
export function consentStateOf(contactId: Expression<string>, orgId: Expression<string>) {
  const deciding = qb
    .selectFrom('consent_entries as e')
    .distinctOn('e.purpose')
    .select(['e.purpose', 'e.status', 'e.method', 'e.version', 'e.expires_at', 'e.created_at'])
    .where('e.contact_id', '=', contactId)
    .where('e.organization_id', '=', orgId)
    .orderBy('e.purpose')
    .orderBy((eb) => eb('e.status', 'in', [sql.lit('granted' as const), sql.lit('withdrawn' as const)]), 'desc')
    .orderBy('e.created_at', 'desc')
    .orderBy('e.id', 'desc');
  return qb
    .selectFrom(deciding.as('s'))
    .select(sql<ConsentStateRow[]>`coalesce(jsonb_agg(to_jsonb(s) order by s.purpose), '[]'::jsonb)`.as('consent'));
}

/** The rows as the API shows them: keyed by purpose; a pending entry whose link no longer works reads `expired`. */
export function toContactConsent(rows: readonly ConsentStateRow[] | null, now: Date): ContactConsent {
  return Object.fromEntries(
    (rows ?? []).map((r): [string, ConsentState] => [
      r.purpose,
      {
        status: r.status === 'pending' && r.expires_at !== null && new Date(r.expires_at).getTime() <= now.getTime() ? 'expired' : r.status,
        method: r.method,
        version: r.version,
        at: iso(r.created_at),
      },
    ]),
  );
}
