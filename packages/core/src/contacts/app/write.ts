import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { errors } from '../../errors.ts';
import { emitEvents } from '../../events/outbox.ts';
import { contactCap } from '../../limits/plans.ts';
import { scoreInputsChanged } from '../shared/apply.ts';
import { applyPatch, changeEvents, hasChanged, newAppContact, rescored, withoutTags } from './apply.ts';
import { unionTags } from '../shared/apply.ts';
import { INSERT_CONTACTS, UPDATE_CONTACTS, updateContactsParams } from '../shared/sql.ts';
import { contactErrors, isEmailConflict } from './errors.ts';
import { type AppContactRow, toAppContact } from './row.ts';
import type { AppContact, AppContactDetail, ContactCreateInput, ContactUpdateInput } from './schemas.ts';
import { toContactConsent } from '../../consent/state.ts';
import * as q from './sql.ts';
import { toEventContact } from '../shared/row.ts';
import { BUMP_CONTACT_COUNT, LOCK_CONTACT_COUNT } from '../shared/sql.ts';
import { transact } from '../shared/transact.ts';

/** Side effects a write may ask for inside its transaction; the router wires them to the job queue. */
export interface WriteHooks {
  /** Contacts whose score inputs changed, e.g. to queue the AI score adjustment. */
  onScoreInputsChanged?: ((tx: Db, contactIds: string[]) => Promise<void>) | undefined;
}

export async function loadContact(db: Db, orgId: string, id: string): Promise<AppContact> {
  const [row] = await db.run(q.GET_LIVE, { id, orgId });
  if (!row) throw contactErrors.notFound(id);
  return toAppContact(row);
}

/** The contact as contacts.get shows it: with its consent (writes answer without it: they never change it). */
export async function loadContactDetail(db: Db, orgId: string, id: string, now: Date): Promise<AppContactDetail> {
  const [row] = await db.run(q.GET_LIVE_DETAIL, { id, orgId });
  if (!row) throw contactErrors.notFound(id);
  return { ...toAppContact(row), consent: toContactConsent(row.consent, now) };
}

export async function assertCompany(tx: Db, orgId: string, companyId: string): Promise<void> {
  const [found] = await tx.run(q.FIND_COMPANY, { id: companyId, orgId });
  if (!found) throw contactErrors.companyNotFound(companyId);
}

/** Refuses an email a live contact other than `selfId` holds (the spec's 409). */
export async function assertEmailFree(tx: Db, orgId: string, email: string, selfId: string): Promise<void> {
  const [taken] = await tx.run(q.FIND_LIVE_EMAIL, { orgId, email, selfId });
  if (taken) throw contactErrors.emailExists(taken.id);
}

/** Runs a statement that may take a live email; the unique index answers a race our check could not see. */
export async function guardEmail<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isEmailConflict(err)) throw contactErrors.emailExists();
    throw err;
  }
}

/** Stores a changed row after checking what the change brings in (a new email, a new company). */
export async function writeContact(tx: Db, before: AppContactRow, after: AppContactRow): Promise<void> {
  if (after.email && after.email !== before.email) await assertEmailFree(tx, after.organization_id, after.email, after.id);
  if (after.company_id && after.company_id !== before.company_id) await assertCompany(tx, after.organization_id, after.company_id);
  await guardEmail(() => tx.run(UPDATE_CONTACTS, updateContactsParams([after], after.organization_id)));
}

export async function createContact(
  db: Db,
  actor: InternalActor,
  input: ContactCreateInput,
  now: Date,
  hooks: WriteHooks = {},
): Promise<AppContact> {
  return transact(db, async (tx) => {
    const row = newAppContact(actor.orgId, randomUUID(), input, now);
    if (row.email) await assertEmailFree(tx, actor.orgId, row.email, row.id);
    if (row.company_id) await assertCompany(tx, actor.orgId, row.company_id);
    // The organization row is the admission queue for new contacts, shared with the /v1 upserts.
    const [org] = await tx.run(LOCK_CONTACT_COUNT, { orgId: actor.orgId });
    if ((org?.contact_count ?? 0) >= contactCap(actor.plan, actor.contactBooster)) throw errors.contactLimitReached();
    const inserted = await tx.run(INSERT_CONTACTS, { rows: JSON.stringify([row]) });
    if (inserted.length === 0) throw contactErrors.emailExists();
    await tx.run(BUMP_CONTACT_COUNT, { by: 1, orgId: actor.orgId });
    await emitEvents(tx, [
      { orgId: actor.orgId, event: 'contact.created', source: actor.eventSource ?? 'app', data: { contact: toEventContact(row) }, at: now },
    ]);
    await hooks.onScoreInputsChanged?.(tx, [row.id]);
    return loadContact(tx, actor.orgId, row.id);
  });
}

/**
 * One change to one live contact, under its row lock: compute, store, emit. A change that changes nothing writes
 * nothing and emits nothing, so retries and double clicks are harmless.
 */
async function mutate(
  db: Db,
  actor: InternalActor,
  id: string,
  now: Date,
  change: (row: AppContactRow, now: Date) => AppContactRow,
  opts: { tagEvents?: boolean; hooks?: WriteHooks } = {},
): Promise<AppContact> {
  return transact(db, async (tx) => {
    const [row] = await tx.run(q.LOCK_LIVE, { id, orgId: actor.orgId });
    if (!row) throw contactErrors.notFound(id);
    const next = change(row, now);
    if (hasChanged(row, next)) {
      await writeContact(tx, row, next);
      await emitEvents(tx, changeEvents(row, next, now, { tagEvents: opts.tagEvents ?? false, source: actor.eventSource ?? 'app' }));
      if (scoreInputsChanged(row, next)) await opts.hooks?.onScoreInputsChanged?.(tx, [id]);
    }
    return loadContact(tx, actor.orgId, id);
  });
}

export function updateContact(db: Db, actor: InternalActor, input: ContactUpdateInput, now: Date, hooks: WriteHooks = {}) {
  const { id, ...patch } = input;
  return mutate(db, actor, id, now, (row, now) => applyPatch(row, patch, now), { hooks });
}

/** One `contact.tag_added` per tag the contact did not carry yet (case-insensitive), so automations can filter on `data.tag`. */
export function addTags(db: Db, actor: InternalActor, id: string, tags: readonly string[], now: Date) {
  return mutate(db, actor, id, now, (row, now) => ({ ...row, tags: unionTags(row.tags, tags), updated_at: now }), { tagEvents: true });
}

export function removeTags(db: Db, actor: InternalActor, id: string, tags: readonly string[], now: Date) {
  return mutate(db, actor, id, now, (row, now) => ({ ...row, tags: withoutTags(row.tags, tags), updated_at: now }));
}

export function setStage(db: Db, actor: InternalActor, id: string, stage: string, now: Date) {
  return mutate(db, actor, id, now, (row, now) => ({ ...row, stage, updated_at: now }));
}

/** The override wins over the computed score while set; clearing it brings the computed score (base plus AI step) back. */
export function setScoreOverride(db: Db, actor: InternalActor, id: string, score: number | null, now: Date) {
  return mutate(db, actor, id, now, (row, now) => rescored({ ...row, score_override: score }, now));
}
