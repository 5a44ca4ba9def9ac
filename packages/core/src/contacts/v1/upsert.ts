import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { Actor } from '../../auth/actor.ts';
import { normalizeDomain } from '../../companies/domain.ts';
import { AppError, errors } from '../../errors.ts';
import { emitEvents, eventRowsParam, type PendingEvent } from '../../events/outbox.ts';
import { contactCap } from '../../limits/plans.ts';
import { applyRow, newContact, type ResolvedRow, scoreInputsChanged } from '../shared/apply.ts';
import type { ContactRow } from '../shared/row.ts';
import { toEventContact } from '../shared/row.ts';
import { updateContactsParams } from '../shared/sql.ts';
import type { ContactUpsertInput, ContactUpsertOutput } from './schemas.ts';
import { announceAfterCommit } from '../../events/written.ts';
import { CAP_MARGIN, fitsOneTrip, upsertOneTrip } from './one-trip.ts';
import type { UpsertOptions, UpsertRowInput } from './options.ts';
import * as sql from './sql.ts';

/** A contact upsert row; `score` (from POST /v1/leads) becomes the manual score override. */
export type MatchedBy = 'email' | 'domain_name' | null;

/** What an upsert needs of its actor: the organization and its contact cap (form intake acts for an organization, not a key). */
export type UpsertActor = Pick<Actor, 'orgId' | 'plan' | 'contactBooster' | 'contactCount'>;

export type RowOutcome =
  | { ok: true; id: string; created: boolean; matchedBy: MatchedBy; contact: ContactRow }
  | { ok: false; error: AppError };

interface NameIdentity {
  company_id: string;
  first_name: string;
  last_name: string;
}

interface Group {
  key: string;
  email?: string;
  name?: NameIdentity;
  rows: { index: number; row: ResolvedRow }[];
}

const nameKey = (n: NameIdentity) => `n:${JSON.stringify([n.company_id, n.first_name, n.last_name])}`;

/** Rule 1: an email, or companyDomain together with firstName and lastName. */
function hasIdentity(i: ContactUpsertInput): boolean {
  return Boolean(i.email || (i.companyDomain && i.firstName?.trim() && i.lastName?.trim()));
}

function identityOf(i: ContactUpsertInput, companyId: string | null | undefined): Omit<Group, 'rows'> | null {
  if (i.email) return { key: `e:${i.email}`, email: i.email };
  const first = i.firstName?.trim().toLowerCase();
  const last = i.lastName?.trim().toLowerCase();
  if (!companyId || !first || !last) return null;
  const name = { company_id: companyId, first_name: first, last_name: last };
  return { key: nameKey(name), name };
}

/** Resolves companies for every row: one query for the whole batch. Unusable or unknown domains fail their row. */
async function resolveCompanies(tx: Db, orgId: string, inputs: readonly ContactUpsertInput[]) {
  const domains = inputs.map((i) => (i.companyDomain ? normalizeDomain(i.companyDomain) : null));
  const wanted = [...new Set(domains.filter((d): d is string => d !== null))];
  const found = wanted.length ? await tx.run(sql.FIND_COMPANIES, { orgId, domains: JSON.stringify(wanted) }) : [];
  const idByDomain = new Map(found.map((c) => [c.domain, c.id]));
  return inputs.map((i, n): string | null | undefined | AppError => {
    if (i.companyDomain === undefined) return undefined;
    if (i.companyDomain === null) return null;
    const domain = domains[n];
    if (!domain) {
      return errors.validation(
        [{ path: 'companyDomain', message: 'companyDomain is not a usable domain (expected e.g. example.com)' }],
        `companyDomain ${JSON.stringify(i.companyDomain)} is not a usable domain`,
      );
    }
    return idByDomain.get(domain) ?? errors.companyNotFound(domain);
  });
}

/** Loads (and locks) the stored contact of every identity in the batch. */
async function loadMatches(tx: Db, orgId: string, groups: readonly Group[]): Promise<Map<string, ContactRow>> {
  const emails = groups.flatMap((g) => (g.email ? [g.email] : []));
  const names = groups.flatMap((g) => (g.name ? [g.name] : []));
  const matches = new Map<string, ContactRow>();
  if (emails.length) {
    for (const c of await tx.run(sql.MATCH_BY_EMAIL, { orgId, emails: JSON.stringify(emails) })) {
      matches.set(`e:${c.email}`, c);
    }
  }
  if (names.length) {
    await tx.run(sql.LOCK_IDENTITIES, { keys: JSON.stringify(names.map((n) => `${orgId}:${nameKey(n)}`)) });
    for (const c of await tx.run(sql.MATCH_BY_NAME, { names: JSON.stringify(names), orgId })) {
      const name = { company_id: c.company_id!, first_name: c.first_name!.toLowerCase(), last_name: c.last_name!.toLowerCase() };
      matches.set(nameKey(name), c);
    }
  }
  return matches;
}

/**
 * How far below its cap an organization must be for new contacts to be admitted without locking its counter. The
 * counter is bumped after commit there, so it may trail by the contacts in flight at that moment: the margin bounds
 * them (20 connections per process times 100-row batches is 2,000 per process).
 */
export { CAP_MARGIN };

/**
 * How many new contacts may be created now. Far from the cap: all of them, on an unlocked read of the counter. Near
 * it: the organization row is locked and the counter decides exactly, one transaction at a time.
 */
async function admit(tx: Db, actor: UpsertActor, wanted: number): Promise<{ room: number; locked: boolean }> {
  // Authentication may have read the counter moments ago, unlocked as this read would be.
  const seen =
    actor.contactCount === undefined
      ? (await tx.run(sql.READ_CONTACT_COUNT, { orgId: actor.orgId }))[0]
      : { contact_count: actor.contactCount, plan: actor.plan, contact_booster: actor.contactBooster };
  const cap = seen ? contactCap(seen.plan, seen.contact_booster) : contactCap(actor.plan, actor.contactBooster);
  if ((seen?.contact_count ?? 0) + wanted <= cap - CAP_MARGIN) return { room: wanted, locked: false };
  const [org] = await tx.run(sql.LOCK_CONTACT_COUNT, { orgId: actor.orgId });
  const lockedCap = org ? contactCap(org.plan, org.contact_booster) : cap;
  return { room: Math.max(0, lockedCap - (org?.contact_count ?? 0)), locked: true };
}

/**
 * What an upsert of an existing contact changed beyond `contact.updated`, as the application emits it: one
 * `contact.tag_added` per tag gained (with `tag`), and `contact.score_changed` (with `previousScore`) when the score moved.
 */
function followUpEvents(orgId: string, before: ContactRow, after: ContactRow, opts: UpsertOptions): PendingEvent[] {
  const contact = toEventContact(after);
  const base = { orgId, source: opts.eventSource, at: opts.now };
  const had = new Set(before.tags.map((t) => t.toLowerCase()));
  const out: PendingEvent[] = after.tags
    .filter((t) => !had.has(t.toLowerCase()))
    .map((tag) => ({ ...base, event: 'contact.tag_added', data: { contact, tag } }));
  if (after.lead_score !== before.lead_score)
    out.push({ ...base, event: 'contact.score_changed', data: { contact, previousScore: before.lead_score } });
  return out;
}

/**
 * Upserts many contacts inside the caller's transaction, set-based: a handful of statements whatever the batch size.
 * Rows naming the same identity are applied in order onto one contact. A row that breaks a rule gets its own error
 * outcome and the others go on.
 */
export async function upsertContactsInTx(
  tx: Db,
  actor: UpsertActor,
  inputs: readonly UpsertRowInput[],
  opts: UpsertOptions,
): Promise<RowOutcome[]> {
  const outcomes: (RowOutcome | undefined)[] = new Array(inputs.length);
  const companies = await resolveCompanies(tx, actor.orgId, inputs);
  const groups = new Map<string, Group>();
  inputs.forEach((input, index) => {
    const companyId = companies[index];
    // The identity rule is checked before the company, so a request missing both hears about the identity first.
    if (!hasIdentity(input) || companyId instanceof AppError) {
      outcomes[index] = { ok: false, error: companyId instanceof AppError && hasIdentity(input) ? companyId : errors.missingIdentity() };
      return;
    }
    const identity = identityOf(input, companyId);
    if (!identity) {
      outcomes[index] = { ok: false, error: errors.missingIdentity() };
      return;
    }
    const row: ResolvedRow = { input, companyId, source: input.source ?? opts.headerSource ?? 'api', scoreOverride: input.score };
    const group = groups.get(identity.key) ?? { ...identity, rows: [] };
    group.rows.push({ index, row });
    groups.set(identity.key, group);
  });

  const { now } = opts;
  const matches = await loadMatches(tx, actor.orgId, [...groups.values()]);
  const fresh = [...groups.values()].filter((g) => !matches.has(g.key));
  const admission = fresh.length ? await admit(tx, actor, fresh.length) : { room: 0, locked: false };
  const admitted = fresh.slice(0, admission.room);
  for (const g of fresh.slice(admission.room)) {
    for (const { index } of g.rows) outcomes[index] = { ok: false, error: errors.contactLimitReached() };
  }

  const inserts = new Map<string, ContactRow>();
  for (const g of admitted) inserts.set(g.key, newContact(actor.orgId, randomUUID(), g.rows[0]!.row, now));
  if (inserts.size) {
    const inserted = await tx.run(sql.INSERT_CONTACTS, { rows: JSON.stringify([...inserts.values()]) });
    const bump = (db: Db) => db.run(sql.BUMP_CONTACT_COUNT, { by: inserted.length, orgId: actor.orgId });
    // Far from the cap the shared counter is bumped after commit, so no transaction holds its row lock.
    if (admission.locked) await bump(tx);
    else await tx.afterCommit(bump);
    const insertedIds = new Set(inserted.map((r) => r.id));
    // A concurrent transaction created one of these emails after our match; it is now committed, so merge into it.
    const lost = [...inserts.entries()].filter(([, c]) => !insertedIds.has(c.id));
    if (lost.length) {
      for (const [key] of lost) inserts.delete(key);
      const rematched = await loadMatches(
        tx,
        actor.orgId,
        lost.map(([key]) => groups.get(key)!),
      );
      for (const [key, c] of rematched) matches.set(key, c);
    }
  }

  const events: PendingEvent[] = [];
  const updates: ContactRow[] = [];
  const scoreChanged: string[] = [];
  for (const g of groups.values()) {
    const inserted = inserts.get(g.key);
    let current = inserted ?? matches.get(g.key);
    if (!current) continue; // refused by the contact cap
    const original = current;
    const matchedBy: MatchedBy = g.email ? 'email' : 'domain_name';
    g.rows.forEach(({ index, row }, n) => {
      const created = inserted !== undefined && n === 0;
      const before = current!;
      if (!created) current = applyRow(current!, row, now);
      outcomes[index] = { ok: true, id: current!.id, created, matchedBy: created ? null : matchedBy, contact: current! };
      events.push({
        orgId: actor.orgId,
        event: created ? 'contact.created' : 'contact.updated',
        source: opts.eventSource,
        data: { contact: toEventContact(current!) },
        at: now,
      });
      if (!created) events.push(...followUpEvents(actor.orgId, before, current!, opts));
    });
    if (!inserted || g.rows.length > 1) updates.push(current);
    if (inserted || scoreInputsChanged(original, current)) scoreChanged.push(current.id);
  }
  if (updates.length) {
    await tx.run(sql.UPDATE_CONTACTS_AND_EMIT, { ...updateContactsParams(updates, actor.orgId), events: eventRowsParam(events) });
    await announceAfterCommit(tx);
  } else await emitEvents(tx, events);
  if (scoreChanged.length && opts.onScoreInputsChanged) await opts.onScoreInputsChanged(tx, scoreChanged);
  return outcomes.map((o) => o ?? { ok: false, error: errors.saveFailed(new Error('row was not processed')) });
}

/**
 * Upserts one contact. On /v1 (`opts.envelope`) the common case (by email, nothing to queue beside it) is one statement
 * with the request's count and Idempotency-Key (one-trip.ts); everything else runs in a transaction of its own, counted
 * first and with its answer stored under the Idempotency-Key in that transaction. A broken rule is thrown.
 */
export async function upsertContact(db: Db, actor: Actor, input: UpsertRowInput, opts: UpsertOptions): Promise<ContactUpsertOutput> {
  const { envelope } = opts;
  if (envelope && fitsOneTrip(input, opts)) {
    const answer = await upsertOneTrip(db, actor, input, opts, envelope);
    if (answer) return answer;
  }
  const work = async (tx: Db): Promise<ContactUpsertOutput> => {
    const [outcome] = await upsertContactsInTx(tx, actor, [input], opts);
    if (!outcome?.ok) throw outcome?.error ?? errors.saveFailed(new Error('no outcome'));
    return { id: outcome.id, created: outcome.created, matchedBy: outcome.matchedBy };
  };
  try {
    return await (envelope ? envelope.classic(db, work) : db.transaction(work));
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw errors.saveFailed(err);
  }
}
