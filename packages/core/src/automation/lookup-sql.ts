import { qb, sql, statement } from '@leadwire/db';
import { withCompany } from '../contacts/app/sql.ts';

/*
 * Statements of the automation lookups (find contact, dropdown choices), each built once. Every one reads through an
 * index that leads with the organization and stops after a bounded number of rows, whatever the workspace's size.
 */

/** The live contact with this email: emails are stored lowercased and unique among live contacts (the partial index). */
export const LIVE_CONTACT_WITH_EMAIL = statement<{ orgId: string; email: string }>()((p) =>
  withCompany().where('c.organization_id', '=', p.orgId).where('c.email', '=', p.email).where('c.deleted_at', 'is', null).limit(sql.lit(1)),
);

/**
 * The tags of up to `scan` of the organization's live contacts (read through contacts_org_updated_live_idx, which leads with the organization),
 * one per spelling ignoring case, most used first. A workspace above `scan` contacts gets its tags from a part of
 * them: a dropdown is a convenience, and the input still takes any tag typed in.
 */
export const TAG_CHOICES = statement<{ orgId: string; scan: number; limit: number }>()((p) =>
  qb
    .selectFrom((db) =>
      db
        .selectFrom((inner) =>
          inner
            .selectFrom('contacts')
            .select('tags')
            .where('organization_id', '=', p.orgId)
            .where('deleted_at', 'is', null)
            .limit(p.scan)
            .as('c'),
        )
        .select((eb) => sql<string>`unnest(${eb.ref('c.tags')})`.as('tag'))
        .as('t'),
    )
    .select((eb) => [sql<string>`min(${eb.ref('t.tag')})`.as('name'), sql<number>`count(*)::int`.as('contacts')])
    .groupBy((eb) => sql`lower(${eb.ref('t.tag')})`)
    .orderBy(sql`count(*)`, 'desc')
    .orderBy((eb) => sql`min(${eb.ref('t.tag')})`)
    .limit(p.limit),
);

/**
 * A page of the organization's companies in domain order, after the domain `after` ('' for the first page): a range
 * of companies_org_domain_unique, so a deep page costs what the first does.
 */
export const COMPANY_CHOICES = statement<{ orgId: string; after: string; limit: number }>()((p) =>
  qb
    .selectFrom('companies')
    .select(['id', 'name', 'domain'])
    .where('organization_id', '=', p.orgId)
    .where('domain', '>', p.after)
    .orderBy('domain')
    .limit(p.limit),
);
