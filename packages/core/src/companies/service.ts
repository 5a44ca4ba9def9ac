import { randomUUID } from 'node:crypto';
import { qb, sql, statement, type Db } from '@leadwire/db';
import type { Actor } from '../auth/actor.ts';
import { requireDomain } from './domain.ts';
import type { Envelope } from '../auth/envelope.ts';
import { type EnvelopeCall, envelopeArguments, type EnvelopeRow } from '../auth/envelope-sql.ts';
import type { CompanyUpsertInput, CompanyUpsertOutput } from './schemas.ts';

/** A company's parameters as a statement takes them (`custom`: a JSON text). */
export interface NewCompanyParams {
  id: string;
  orgId: string;
  domain: string;
  name: string | null;
  industry: string | null;
  size: string | null;
  custom: string;
  now: Date;
}

/** The row a new company is inserted as, by the /v1 upsert and the application's create. */
export const newCompany = (p: NewCompanyParams) => ({
  id: p.id,
  organization_id: p.orgId,
  domain: p.domain,
  name: p.name,
  industry: p.industry,
  size: p.size,
  // A key sent as null means "no value", as in every other write of custom data.
  custom: sql<Record<string, unknown>>`jsonb_strip_nulls(${p.custom}::jsonb)`,
  created_at: p.now,
  updated_at: p.now,
});

/**
 * One statement: insert, or on the natural key (organization, domain) overwrite the fields sent. Fields omitted keep
 * their values (the `has_*` flags), and custom keys merge with null removing a key, as for contacts.
 */
const UPSERT_COMPANY = statement<
  NewCompanyParams & {
    hasName: boolean;
    hasIndustry: boolean;
    hasSize: boolean;
  }
>()((p) =>
  qb
    .insertInto('companies')
    .values(newCompany(p))
    .onConflict((oc) =>
      oc.columns(['organization_id', 'domain']).doUpdateSet((eb) => ({
        name: eb.case().when(sql<boolean>`${p.hasName}`).then(eb.ref('excluded.name')).else(eb.ref('companies.name')).end(),
        industry: eb.case().when(sql<boolean>`${p.hasIndustry}`).then(eb.ref('excluded.industry')).else(eb.ref('companies.industry')).end(),
        size: eb.case().when(sql<boolean>`${p.hasSize}`).then(eb.ref('excluded.size')).else(eb.ref('companies.size')).end(),
        custom: sql`jsonb_strip_nulls(${eb.ref('companies.custom')} || ${p.custom}::jsonb)`,
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .returning(['id', sql<boolean>`(xmax = 0)`.as('created')]),
);

type CompanyRow = EnvelopeRow & { id: string | null; created: boolean | null };

/**
 * The same upsert as UPSERT_COMPANY, in one call of `leadwire_v1_companies_upsert` (Migration20261128150000) with the
 * request's envelope (key, count, Idempotency-Key): one round trip.
 */
export const UPSERT_COMPANY_ONE = statement<
  EnvelopeCall & Omit<NewCompanyParams, 'now'> & { hasName: boolean; hasIndustry: boolean; hasSize: boolean }
>()((p) =>
  qb
    .selectFrom(
      sql<CompanyRow>`leadwire_v1_companies_upsert(${envelopeArguments(p)}, ${p.orgId}::uuid, ${p.id}::uuid, ${p.domain}::text, ${p.name}::text,
        ${p.industry}::text, ${p.size}::text, ${p.custom}::jsonb, ${p.hasName}::boolean, ${p.hasIndustry}::boolean, ${p.hasSize}::boolean)`.as(
        'r',
      ),
    )
    .select(['r.key_ok', 'r.hits', 'r.locked', 'r.prior_hash', 'r.prior_response', 'r.id', 'r.created']),
);

export async function upsertCompany(
  db: Db,
  actor: Actor,
  input: CompanyUpsertInput,
  now: Date,
  envelope?: Envelope,
): Promise<CompanyUpsertOutput> {
  const domain = requireDomain(input.domain);
  const params = {
    id: randomUUID(),
    orgId: actor.orgId,
    domain,
    name: input.name ?? null,
    industry: input.industry ?? null,
    size: input.size ?? null,
    custom: JSON.stringify(input.custom ?? {}),
    hasName: input.name !== undefined,
    hasIndustry: input.industry !== undefined,
    hasSize: input.size !== undefined,
  };
  const plain = async (tx: Db): Promise<CompanyUpsertOutput> => {
    const [row] = await tx.run(UPSERT_COMPANY, { ...params, now });
    return { id: row!.id, created: row!.created, domain };
  };
  if (!envelope) return plain(db);
  const run = await envelope.run(db, UPSERT_COMPANY_ONE, { ...envelope.params(), ...params });
  // A stored answer is the one this route stored: the same operation's answer.
  if ('replay' in run) return run.replay as CompanyUpsertOutput;
  if ('row' in run && run.row.id !== null && run.row.created !== null) return { id: run.row.id, created: run.row.created, domain };
  return envelope.classic(db, plain);
}
