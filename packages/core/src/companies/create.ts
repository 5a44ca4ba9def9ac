import { randomUUID } from 'node:crypto';
import { qb, sql, statement, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { AppError } from '../errors.ts';
import { requireDomain } from './domain.ts';
import { BY_DOMAIN, COMPANY_COLUMNS, toCompanyRecord } from './read.ts';
import type { CompanyCreateInput, CompanyRecord } from './schemas.ts';

/** Inserts unless the domain is taken (the organization's unique key decides, so two concurrent creates make one). */
const INSERT = statement<{
  id: string;
  orgId: string;
  domain: string;
  name: string | null;
  industry: string | null;
  size: string | null;
  custom: string;
  now: Date;
}>()((p) =>
  qb
    .insertInto('companies')
    .values({
      id: p.id,
      organization_id: p.orgId,
      domain: p.domain,
      name: p.name,
      industry: p.industry,
      size: p.size,
      // A key sent as null means "no value", as in every other write of custom data.
      custom: sql`jsonb_strip_nulls(${p.custom}::jsonb)`,
      created_at: p.now,
      updated_at: p.now,
    })
    .onConflict((oc) => oc.columns(['organization_id', 'domain']).doNothing())
    .returning(COMPANY_COLUMNS),
);

/**
 * The application's create. Unlike /v1's upsert it never changes an existing company: a user who types a domain that
 * exists is told so (409 company_exists, with its id), and may open that company instead. Companies have no events.
 */
export async function createCompany(db: Db, actor: InternalActor, input: CompanyCreateInput, now: Date): Promise<CompanyRecord> {
  const domain = requireDomain(input.domain);
  const [row] = await db.run(INSERT, {
    id: randomUUID(),
    orgId: actor.orgId,
    domain,
    name: input.name ?? null,
    industry: input.industry ?? null,
    size: input.size ?? null,
    custom: JSON.stringify(input.custom ?? {}),
    now,
  });
  if (row) return toCompanyRecord(row);
  const [existing] = await db.run(BY_DOMAIN, { orgId: actor.orgId, domain });
  throw new AppError(
    'company_exists',
    `A company with domain ${domain} already exists`,
    existing ? { existingCompanyId: existing.id } : {},
  );
}
