import { type DB, qb, type Selectable, sql, statement, type Db } from '@leadwire/db';
import type { Actor } from '../auth/actor.ts';
import { errors } from '../errors.ts';
import { iso } from '../records/dates.ts';
import { newestFirst, type PageParams } from '../records/pagination.ts';
import { listRecords, requireRecord } from '../records/query.ts';
import { afterStart, positionOf, startOf, type SyncPageInput, toSyncPage } from '../records/sync-page.ts';
import { requireDomain } from './domain.ts';
import type { AppCompanyListInput, CompanyRecord } from './schemas.ts';

/** Every column a company's view is made of; the create returns the same ones. */
export const COMPANY_COLUMNS = ['id', 'domain', 'name', 'industry', 'size', 'custom', 'created_at', 'updated_at'] as const;
export type CompanyRow = Pick<Selectable<DB['companies']>, (typeof COMPANY_COLUMNS)[number]>;

export function toCompanyRecord(r: CompanyRow): CompanyRecord {
  return {
    id: r.id,
    domain: r.domain,
    name: r.name,
    industry: r.industry,
    size: r.size,
    custom: r.custom,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

/** Companies in (updated_at, id) order from a start, walking companies_org_updated_idx (no sort, own rows only). */
export const LIST_SINCE = statement<{ orgId: string; afterTs: string; afterId: string; limit: number }>()((p) =>
  qb
    .selectFrom('companies as co')
    .select(COMPANY_COLUMNS.map((c) => `co.${c}` as const))
    .select((eb) => positionOf(eb.ref('co.updated_at')).as('position'))
    .where('co.organization_id', '=', p.orgId)
    .where((eb) => afterStart(eb.ref('co.updated_at'), eb.ref('co.id'), p.afterTs, p.afterId))
    .orderBy('co.updated_at')
    .orderBy('co.id')
    .limit(p.limit),
);

const BY_ID = statement<{ orgId: string; id: string }>()((p) =>
  qb.selectFrom('companies').select(COMPANY_COLUMNS).where('organization_id', '=', p.orgId).where('id', '=', p.id),
);

export const BY_DOMAIN = statement<{ orgId: string; domain: string }>()((p) =>
  qb.selectFrom('companies').select(COMPANY_COLUMNS).where('organization_id', '=', p.orgId).where('domain', '=', p.domain),
);

/** `%` and `_` in a search are literal characters, not wildcards. */
const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

/**
 * The application's list, newest first (companies_org_created_idx). `q` is null or a LIKE pattern: a filter over the
 * rows walked in that order, which for a selective `q` in a large organization reads more than one page of rows, as
 * the contact list's search does.
 */
export const LIST_NEWEST = statement<PageParams & { pattern: string | null }>()((p) =>
  newestFirst(
    qb
      .selectFrom('companies as co')
      .select(COMPANY_COLUMNS.map((c) => `co.${c}` as const))
      .where('co.organization_id', '=', p.orgId)
      .where((eb) =>
        eb.or([
          sql<boolean>`${p.pattern}::text is null`,
          sql<boolean>`${eb.ref('co.name')} ilike ${p.pattern} escape '\\'`,
          sql<boolean>`${eb.ref('co.domain')} ilike ${p.pattern} escape '\\'`,
        ]),
      ),
    'companies',
    'co',
    p,
  ),
);

/** One page of the organization's companies, oldest change first (/v1). */
export async function listCompanyRecords(db: Db, actor: Actor, input: SyncPageInput) {
  const rows = await db.run(LIST_SINCE, { orgId: actor.orgId, ...startOf(input, 'companies'), limit: input.limit + 1 });
  return toSyncPage('companies', rows, input.limit, toCompanyRecord);
}

/** A company of the organization; an id of another organization is simply not found. */
export async function getCompanyRecord(db: Db, orgId: string, id: string): Promise<CompanyRecord> {
  return toCompanyRecord(await requireRecord(db, BY_ID, orgId, id, 'company'));
}

/** The company at a domain, normalised as upserts normalise it. */
export async function findCompanyByDomain(db: Db, orgId: string, input: string): Promise<CompanyRecord> {
  const domain = requireDomain(input);
  const [row] = await db.run(BY_DOMAIN, { orgId, domain });
  if (!row) throw errors.notFound(`No company with domain ${domain}`);
  return toCompanyRecord(row);
}

/** The application's list: newest first, optionally only names or domains containing `q`. */
export function listCompaniesNewestFirst(db: Db, orgId: string, input: AppCompanyListInput) {
  return listRecords(db, 'companies', LIST_NEWEST, orgId, input, { pattern: input.q ? likePattern(input.q) : null }, toCompanyRecord);
}
