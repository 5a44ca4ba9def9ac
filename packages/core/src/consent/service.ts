import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import { AppError, errors, type Issue } from '../errors.ts';
import { emitEvents } from '../events/outbox.ts';
import type { Jobs } from '../jobs/queue.ts';
import { queueMail } from '../mail/send-job.ts';
import { confirmationEmail, confirmUrl, withdrawUrl } from './emails.ts';
import { consentKey, hashAddress, type LinkPayload, orgOfLink, signLink, verifyLink } from './keys.ts';
import { CONFIRMATION_TTL_MS, consentKey as answerKey, type FormConsent } from './schemas.ts';
import * as q from './sql.ts';

/**
 * Consent with evidence (issue 30). A form's consent checkboxes leave an append-only entry per purpose on every
 * submission with a contact; a double opt-in form's ticked boxes stay pending until the mailed link is followed and
 * confirmed on its page. Grants and withdrawals decide a purpose (its latest one), emit `contact.consent_changed` when
 * they change it, and keep the contact's `email_consent` / `sms_consent` flags in step. No API key can write any of it.
 */

/** What the consent service needs besides the database: the mail queue and where the links' pages are. */
export interface ConsentDeps {
  jobs: Jobs;
  appUrl: string;
}

/** One confirmation mail per contact this often at most: a public form must not become a way to flood an inbox. */
export const MAIL_SPACING_MS = 10 * 60 * 1000;

const TICKED = new Set(['true', 'on', 'yes', '1']);
const UNTICKED = new Set(['false', 'off', 'no', '0', '']);

/** The consent boxes of a submission (`_consent_<purpose>`): ticked or not; a required box unticked is a problem. */
export function consentAnswers(consent: FormConsent | null, body: Record<string, unknown> | URLSearchParams) {
  const answers = new Map<string, boolean>();
  const issues: Issue[] = [];
  for (const p of consent?.purposes ?? []) {
    const key = answerKey(p.purpose);
    const raw = body instanceof URLSearchParams ? body.get(key) : body[key];
    const s = typeof raw === 'boolean' ? String(raw) : typeof raw === 'string' ? raw.trim().toLowerCase() : raw == null ? '' : null;
    if (s === null || (!TICKED.has(s) && !UNTICKED.has(s))) issues.push({ path: key, message: `${key} must be ticked (true) or not` });
    else answers.set(p.purpose, TICKED.has(s));
    if (p.required && answers.get(p.purpose) !== true)
      issues.push({ path: key, message: `"${p.text}" must be accepted to send this form` });
  }
  return { answers, issues };
}

type Entry = q.EntryRow;
interface ContactRef {
  id: string;
  email: string | null;
  first_name: string | null;
}

/** An entry as the service writes it; the id is made here. */
type EntryInput = Omit<Parameters<typeof insertRow>[1], 'id' | 'orgId'>;
const insertRow = (tx: Db, p: q.InsertEntryParams) => tx.run(q.INSERT_ENTRY, p);

async function insert(tx: Db, orgId: string, e: EntryInput): Promise<Entry | undefined> {
  const [row] = await insertRow(tx, { ...e, orgId, id: randomUUID() });
  return row;
}

/** A grant or withdrawal that changed its purpose: the event, and the contact's own flag for email and SMS. */
async function changed(tx: Db, orgId: string, contact: ContactRef, entry: Entry, now: Date) {
  const granted = entry.status === 'granted';
  if (entry.purpose === 'email_marketing') await tx.run(q.SET_EMAIL_CONSENT, { orgId, contactId: contact.id, granted });
  if (entry.purpose === 'sms') await tx.run(q.SET_SMS_CONSENT, { orgId, contactId: contact.id, granted });
  await emitEvents(tx, [
    {
      orgId,
      event: 'contact.consent_changed',
      source: 'inbound',
      at: now,
      data: {
        contact: { id: contact.id, firstName: contact.first_name, email: contact.email },
        consent: {
          purpose: entry.purpose,
          granted,
          method: entry.method,
          text: entry.text,
          version: entry.version,
          formId: entry.form_id,
          entryId: entry.id,
        },
      },
    },
  ]);
}

/** Whether each purpose is granted now (its latest grant or withdrawal). */
async function deciding(tx: Db, orgId: string, contactId: string): Promise<Map<string, Entry>> {
  return new Map((await tx.run(q.DECIDING, { orgId, contactId })).map((r) => [r.purpose, r]));
}

/**
 * Records a submission's consent answers for its contact (in the submission's transaction): an entry per purpose of the
 * form, granted, declined or, on a double opt-in form, pending with a confirmation mail queued in the same transaction.
 */
export async function recordFormConsents(
  tx: Db,
  deps: ConsentDeps,
  a: {
    orgId: string;
    form: { id: string | null; name: string; consent: FormConsent };
    contact: ContactRef;
    answers: Map<string, boolean>;
    pageUrl: string | null;
    ip: string | undefined;
    now: Date;
  },
): Promise<void> {
  const key = await consentKey(tx, a.orgId);
  const ipHash = a.ip ? hashAddress(key, a.ip) : null;
  const method = a.form.consent.doubleOptIn ? ('double_opt_in' as const) : ('single_opt_in' as const);
  const expiresAt = new Date(a.now.getTime() + CONFIRMATION_TTL_MS);
  const before = await deciding(tx, a.orgId, a.contact.id);
  const pending: Entry[] = [];
  for (const p of a.form.consent.purposes) {
    const ticked = a.answers.get(p.purpose) === true;
    const status = !ticked ? 'declined' : method === 'double_opt_in' ? 'pending' : 'granted';
    const entry = await insert(tx, a.orgId, {
      contactId: a.contact.id,
      purpose: p.purpose,
      status,
      method,
      text: p.text,
      version: p.version,
      formId: a.form.id,
      formName: a.form.name,
      pageUrl: a.pageUrl,
      ipHash,
      expiresAt: status === 'pending' ? expiresAt : null,
      confirms: null,
      now: a.now,
    });
    if (!entry) continue;
    if (status === 'pending') pending.push(entry);
    if (status === 'granted' && before.get(p.purpose)?.status !== 'granted') await changed(tx, a.orgId, a.contact, entry, a.now);
  }
  if (!pending.length || !a.contact.email) return;
  const since = new Date(a.now.getTime() - MAIL_SPACING_MS);
  const [recent] = await tx.run(q.RECENT_PENDING, { orgId: a.orgId, contactId: a.contact.id, since, ids: pending.map((e) => e.id) });
  if (recent) return;
  const [org] = await tx.run(q.ORG_NAME, { orgId: a.orgId });
  const confirm = signLink(key, { k: 'confirm', o: a.orgId, e: pending.map((e) => e.id), x: Math.floor(expiresAt.getTime() / 1000) });
  const unsubscribe = signLink(key, { k: 'withdraw', o: a.orgId, c: a.contact.id, p: pending.map((e) => e.purpose) });
  await queueMail(
    tx,
    deps.jobs,
    confirmationEmail({
      to: a.contact.email,
      orgName: org?.name ?? 'Leadwire',
      texts: pending.map((e) => e.text ?? e.purpose),
      confirm: confirmUrl(deps.appUrl, confirm),
      unsubscribe: withdrawUrl(deps.appUrl, unsubscribe),
      days: CONFIRMATION_TTL_MS / 86_400_000,
    }),
  );
}

const invalidLink = () => new AppError('invalid_token', 'This link is not valid: open it from your email again');
const expiredLink = () => new AppError('consent_link_expired');

/** A link's payload when its signature holds under its organization's key, of the kind asked for. */
async function openLink<K extends LinkPayload['k']>(db: Db, token: string, kind: K): Promise<Extract<LinkPayload, { k: K }>> {
  const orgId = orgOfLink(token);
  if (!orgId) throw invalidLink();
  const [row] = await db.run(q.KEY_OF, { orgId });
  const payload = row ? verifyLink(Buffer.from(row.key, 'base64url'), token) : null;
  if (!payload || payload.k !== kind || payload.o !== orgId) throw invalidLink();
  return payload as Extract<LinkPayload, { k: K }>;
}

export interface ConfirmPage {
  orgName: string;
  texts: string[];
  /** Every entry it names is confirmed already. */
  done: boolean;
}

/** What a confirmation link would confirm (its GET page): reads, changes nothing. Expired: 410. */
export async function readConfirmLink(db: Db, token: string, now: Date): Promise<ConfirmPage> {
  const link = await openLink(db, token, 'confirm');
  if (!Array.isArray(link.e) || link.e.some((id) => typeof id !== 'string')) throw invalidLink();
  return db.transaction(async (tx) => {
    const rows = await tx.run(q.PENDING, { orgId: link.o, ids: link.e });
    if (!rows.length) throw invalidLink();
    const done = rows.every((r) => r.confirmed);
    if (!done && link.x * 1000 <= now.getTime()) throw expiredLink();
    const [org] = await tx.run(q.ORG_NAME, { orgId: link.o });
    return { orgName: org?.name ?? 'Leadwire', texts: rows.map((r) => r.text ?? r.purpose), done };
  });
}

/**
 * The person pressed Confirm: each pending entry the link names gets its confirmation (granted, double opt-in, the
 * text and form of the pending one, the confirming address hashed), once; a purpose not granted before changes.
 */
export async function confirmLink(db: Db, token: string, ip: string | undefined, now: Date) {
  const link = await openLink(db, token, 'confirm');
  if (!Array.isArray(link.e)) throw invalidLink();
  return db.transaction(async (tx) => {
    const rows = await tx.run(q.PENDING, { orgId: link.o, ids: link.e });
    if (!rows.length) throw invalidLink();
    const open = rows.filter((r) => !r.confirmed);
    if (open.length && link.x * 1000 <= now.getTime()) throw expiredLink();
    const [contact] = open.length ? await tx.run(q.CONTACT, { orgId: link.o, contactId: open[0]!.contact_id }) : [];
    if (open.length && !contact) throw errors.notFound('The contact of this link no longer exists');
    const key = await consentKey(tx, link.o);
    const ipHash = ip ? hashAddress(key, ip) : null;
    let confirmed = 0;
    for (const p of open) {
      const before = await deciding(tx, link.o, p.contact_id);
      const entry = await insert(tx, link.o, {
        contactId: p.contact_id,
        purpose: p.purpose,
        status: 'granted',
        method: 'double_opt_in',
        text: p.text,
        version: p.version,
        formId: p.form_id,
        formName: p.form_name,
        pageUrl: p.page_url,
        ipHash,
        expiresAt: null,
        confirms: p.id,
        now,
      });
      if (!entry) continue;
      confirmed++;
      if (before.get(p.purpose)?.status !== 'granted') await changed(tx, link.o, contact!, entry, now);
    }
    return { confirmed };
  });
}

export interface WithdrawPage {
  orgName: string;
  email: string | null;
  purposes: string[];
}

/** What an unsubscribe link would withdraw (its GET page): reads, changes nothing. */
export async function readWithdrawLink(db: Db, token: string): Promise<WithdrawPage> {
  const link = await openLink(db, token, 'withdraw');
  if (typeof link.c !== 'string' || !Array.isArray(link.p)) throw invalidLink();
  const [contact] = await db.run(q.CONTACT, { orgId: link.o, contactId: link.c });
  if (!contact) throw errors.notFound('The contact of this link no longer exists');
  return { orgName: contact.org_name, email: contact.email, purposes: link.p };
}

/** Withdraws the link's purposes that are granted now (an entry each, with the text of the grant withdrawn). */
export async function withdrawLink(db: Db, token: string, ip: string | undefined, now: Date): Promise<{ withdrawn: number }> {
  const link = await openLink(db, token, 'withdraw');
  if (typeof link.c !== 'string' || !Array.isArray(link.p)) throw invalidLink();
  return db.transaction(async (tx) => {
    const [contact] = await tx.run(q.CONTACT, { orgId: link.o, contactId: link.c });
    if (!contact) throw errors.notFound('The contact of this link no longer exists');
    const key = await consentKey(tx, link.o);
    const current = await deciding(tx, link.o, contact.id);
    let withdrawn = 0;
    for (const purpose of link.p) {
      const grant = current.get(purpose);
      if (grant?.status !== 'granted') continue;
      const entry = await insert(tx, link.o, {
        contactId: contact.id,
        purpose,
        status: 'withdrawn',
        method: 'unsubscribe_link',
        text: grant.text,
        version: grant.version,
        formId: grant.form_id,
        formName: grant.form_name,
        pageUrl: null,
        ipHash: ip ? hashAddress(key, ip) : null,
        expiresAt: null,
        confirms: null,
        now,
      });
      if (!entry) continue;
      withdrawn++;
      await changed(tx, link.o, contact, entry, now);
    }
    return { withdrawn };
  });
}
