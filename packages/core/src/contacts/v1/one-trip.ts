import { randomUUID } from 'node:crypto';
import type { Db, Statement } from '@leadwire/db';
import type { Actor } from '../../auth/actor.ts';
import type { Envelope } from '../../auth/envelope.ts';
import type { EnvelopeRow } from '../../auth/envelope-sql.ts';
import { normalizeDomain } from '../../companies/domain.ts';
import { AppError, errors } from '../../errors.ts';
import { currentRequestId } from '../../http/request-scope.ts';
import { CONTACT_CAPS } from '../../limits/plans.ts';
import { newContact, unionTags } from '../shared/apply.ts';
import { announceAfterCommit } from '../../events/written.ts';
import { UPSERT_ONE, type UpsertOneParams } from './one-trip-sql.ts';
import type { ContactUpsertOutput } from './schemas.ts';
import type { UpsertOptions, UpsertRowInput } from './options.ts';

/** How far below its cap an organization must be for new contacts to be admitted without locking its counter. */
export const CAP_MARGIN = 5_000;

/** One byte per character in UTF-8, as the statement's own test reads it (score-sql.ts `asciiOnly`). */
const isAscii = (s: string) => Buffer.byteLength(s) === s.length;

/** The columns a request names, as the statement's merge asks (`sent`). */
function sentColumns(input: UpsertRowInput): string[] {
  const sent: string[] = [];
  if (input.firstName !== undefined) sent.push('first_name');
  if (input.lastName !== undefined) sent.push('last_name');
  if (input.phone !== undefined) sent.push('phone');
  if (input.title !== undefined) sent.push('job_title');
  if (input.companyDomain !== undefined) sent.push('company_id');
  return sent;
}

/** Whether the upsert can be the one statement: matched by email, nothing queued beside it, tags SQL folds as JS does. */
export function fitsOneTrip(input: UpsertRowInput, opts: UpsertOptions): boolean {
  return Boolean(input.email) && !opts.onScoreInputsChanged && (input.tags ?? []).every(isAscii);
}

/** The contact part of a single write's function (one-trip-sql.ts), for an upsert that fits (`fitsOneTrip`). */
export function oneTripParams(
  actor: Pick<Actor, 'orgId'>,
  input: UpsertRowInput,
  opts: UpsertOptions,
  envelope: Envelope,
): UpsertOneParams {
  let domain: string | null = null;
  if (typeof input.companyDomain === 'string') {
    domain = normalizeDomain(input.companyDomain);
    if (!domain) {
      throw errors.validation(
        [{ path: 'companyDomain', message: 'companyDomain is not a usable domain (expected e.g. example.com)' }],
        `companyDomain ${JSON.stringify(input.companyDomain)} is not a usable domain`,
      );
    }
  }
  const source = input.source ?? opts.headerSource ?? 'api';
  // The company (and so the score) is resolved by the function; the row carries the rest of the new contact.
  const fresh = newContact(actor.orgId, randomUUID(), { input, companyId: undefined, source, scoreOverride: input.score }, opts.now);
  const tags = unionTags([], input.tags);
  return {
    ...envelope.params(),
    orgId: actor.orgId,
    row: JSON.stringify(fresh),
    sent: sentColumns(input),
    tags,
    tagsLower: tags.map((t) => t.toLowerCase()),
    custom: JSON.stringify(input.custom ?? {}),
    override: input.score ?? null,
    domain,
    caps: JSON.stringify(CONTACT_CAPS),
    margin: CAP_MARGIN,
    eventSource: opts.eventSource,
    at: opts.now.toISOString(),
    requestId: currentRequestId() ?? null,
  };
}

/** What a single write's function answers about the contact it wrote. */
interface ContactWritten {
  far: boolean | null;
  company_missing: boolean | null;
  id: string | null;
  created: boolean | null;
}

/**
 * Runs a single write's function (one round trip) and settles its envelope: the refusals it carries are thrown (401,
 * 429, 409, and company_not_found), a stored answer comes back as `replay`, and `row` is null when the function left
 * the contact to the TypeScript path (near the organization's cap, or a stored contact SQL cannot merge exactly),
 * having counted the request. A database failure is `save_failed`.
 */
export async function runOneTrip<P extends { domain: string | null }, R extends EnvelopeRow & ContactWritten>(
  db: Db,
  stmt: Statement<P, R>,
  params: P,
  envelope: Envelope,
): Promise<{ replay: unknown } | { row: (R & { id: string; created: boolean }) | null }> {
  const run = await envelope.run(db, stmt, params).catch((err: unknown) => {
    throw err instanceof AppError ? err : errors.saveFailed(err);
  });
  if ('replay' in run) return run;
  if ('redo' in run) return { row: null };
  const { row } = run;
  // The statement wrote the contact's events (if it changed anything): the pumps are told once it committed.
  await announceAfterCommit(db);
  if (row.company_missing) throw errors.companyNotFound(params.domain!);
  if (!row.far || row.id === null || row.created === null) return { row: null };
  return { row: row as R & { id: string; created: boolean } };
}

/**
 * The single upsert by email in one round trip (one-trip-sql.ts): the request's answer, or null when the function left
 * the contact to the TypeScript path, having counted the request.
 */
export async function upsertOneTrip(
  db: Db,
  actor: Pick<Actor, 'orgId'>,
  input: UpsertRowInput,
  opts: UpsertOptions,
  envelope: Envelope,
): Promise<ContactUpsertOutput | null> {
  const run = await runOneTrip(db, UPSERT_ONE, oneTripParams(actor, input, opts, envelope), envelope);
  // A stored answer is the one this route stored: the same operation's answer.
  if ('replay' in run) return run.replay as ContactUpsertOutput;
  if (!run.row) return null;
  return { id: run.row.id, created: run.row.created, matchedBy: run.row.created ? null : 'email' };
}
