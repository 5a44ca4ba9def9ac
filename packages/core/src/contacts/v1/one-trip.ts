import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { Actor } from '../../auth/actor.ts';
import type { Envelope } from '../../auth/envelope.ts';
import { normalizeDomain } from '../../companies/domain.ts';
import { AppError, errors } from '../../errors.ts';
import { currentRequestId } from '../../http/request-scope.ts';
import { CONTACT_CAPS } from '../../limits/plans.ts';
import { newContact, unionTags } from '../shared/apply.ts';
import { UPSERT_ONE, type UpsertOneParams } from './one-trip-sql.ts';
import type { ContactUpsertOutput } from './schemas.ts';
import type { UpsertOptions, UpsertRowInput } from './upsert.ts';

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

/** The statement's parameters for an upsert that fits (`fitsOneTrip`). */
function paramsOf(actor: Pick<Actor, 'orgId'>, input: UpsertRowInput, opts: UpsertOptions, envelope: Envelope): UpsertOneParams {
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
  // The company (and so the score) is resolved by the statement; the row carries the rest of the new contact.
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

/**
 * The single upsert by email in one round trip (one-trip-sql.ts): the request's answer, or null when the statement
 * left the contact to the TypeScript path (near the organization's cap, or a stored contact SQL cannot merge exactly),
 * having counted the request. Refusals are thrown: the envelope's (401, 429, 409), and company_not_found.
 */
export async function upsertOneTrip(
  db: Db,
  actor: Pick<Actor, 'orgId'>,
  input: UpsertRowInput,
  opts: UpsertOptions,
  envelope: Envelope,
): Promise<ContactUpsertOutput | null> {
  const params = paramsOf(actor, input, opts, envelope);
  const rows = await db.run(UPSERT_ONE, params).catch((err: unknown) => err);
  if (!Array.isArray(rows)) {
    const replay = await envelope.recover(db, rows).catch((err: unknown) => {
      throw err instanceof AppError ? err : errors.saveFailed(err);
    });
    return replay ? (replay.response as ContactUpsertOutput) : null;
  }
  const row = (rows as (typeof UPSERT_ONE)['row'][])[0]!;
  const replay = await envelope.settle(db, row);
  if (replay) return replay.response as ContactUpsertOutput;
  if (row.company_missing) throw errors.companyNotFound(params.domain!);
  if (!row.far || row.id === null || row.created === null) return null;
  return { id: row.id, created: row.created, matchedBy: row.created ? null : 'email' };
}
