import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './base.ts';
import { Organization } from './organization.ts';

export const CompanySchema = defineEntity({
  name: 'Company',
  tableName: 'companies',
  uniques: [{ name: 'companies_org_domain_unique', properties: ['organization', 'domain'] }],
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
