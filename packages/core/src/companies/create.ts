import { randomUUID } from 'node:crypto';
import { qb, statement, type Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { AppError } from '../errors.ts';
import { requireDomain } from './domain.ts';
import { BY_DOMAIN, COMPANY_COLUMNS, toCompanyRecord } from './read.ts';
import type { CompanyCreateInput, CompanyRecord } from './schemas.ts';
import { newCompany, type NewCompanyParams } from './service.ts';

/** Inserts unless the domain is taken (the organization's unique key decides, so two concurrent creates make one). */
const INSERT = statement<NewCompanyParams>()((p) =>
  qb
    .insertInto('companies')
    .values(newCompany(p))
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
