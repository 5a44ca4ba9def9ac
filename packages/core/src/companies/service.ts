import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { Actor } from '../auth/actor.ts';
import { errors } from '../errors.ts';
import { normalizeDomain } from './domain.ts';
import type { CompanyUpsertInput } from './schemas.ts';

/**
 * One statement: insert, or on the natural key (organization, domain) overwrite the fields sent. Fields omitted keep
 * their values (the `has_*` flags), and custom keys merge with null removing a key, as for contacts.
 */
const UPSERT_COMPANY = `
insert into companies as c (id, organization_id, domain, name, industry, size, custom, created_at, updated_at)
values (?, ?, ?, ?, ?, ?, jsonb_strip_nulls(?::jsonb), ?, ?)
on conflict (organization_id, domain) do update set
  name = case when ? then excluded.name else c.name end,
  industry = case when ? then excluded.industry else c.industry end,
  size = case when ? then excluded.size else c.size end,
  custom = jsonb_strip_nulls(c.custom || ?::jsonb),
  updated_at = excluded.updated_at
returning id, (xmax = 0) as created`;

export async function upsertCompany(db: Db, actor: Actor, input: CompanyUpsertInput, now: Date) {
  const domain = normalizeDomain(input.domain);
  if (!domain) {
    throw errors.validation(
      [{ path: 'domain', message: 'domain is not a usable domain (expected e.g. example.com)' }],
      `domain ${JSON.stringify(input.domain)} is not a usable domain`,
    );
  }
  const custom = JSON.stringify(input.custom ?? {});
  const [row] = await db.execute<{ id: string; created: boolean }[]>(UPSERT_COMPANY, [
    randomUUID(),
    actor.orgId,
    domain,
    input.name ?? null,
    input.industry ?? null,
    input.size ?? null,
    custom,
    now,
    now,
    input.name !== undefined,
    input.industry !== undefined,
    input.size !== undefined,
    custom,
  ]);
  return { id: row!.id, created: row!.created, domain };
}
