import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './base.ts';
import { Organization } from './organization.ts';

export const CompanySchema = defineEntity({
  name: 'Company',
  tableName: 'companies',
  uniques: [{ name: 'companies_org_domain_unique', properties: ['organization', 'domain'] }],
  // The two list orders: /v1's sync walks (updated_at, id) up, the application's list (created_at, id) down.
  indexes: [
    {
      name: 'companies_org_updated_idx',
      expression: 'create index "companies_org_updated_idx" on "companies" ("organization_id", "updated_at", "id")',
    },
    {
      name: 'companies_org_created_idx',
      expression: 'create index "companies_org_created_idx" on "companies" ("organization_id", "created_at", "id")',
    },
  ],
  properties: {
    ...timestamps,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    /** Bare lowercase host, e.g. `example.com`: the natural key of a company. */
    domain: p.text(),
    name: p.text().nullable(),
    industry: p.text().nullable(),
    size: p.text().nullable(),
    custom: p.json<Record<string, unknown>>().default('{}'),
  },
});
export class Company extends CompanySchema.class {}
CompanySchema.setClass(Company);
