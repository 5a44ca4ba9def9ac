import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './base.ts';
import { Company } from './company.ts';
import { Organization } from './organization.ts';

export const ContactSchema = defineEntity({
  name: 'Contact',
  tableName: 'contacts',
  // Upsert matching and the "oldest wins" rule read these; the partial unique index makes concurrent upserts of one
  // new email create exactly one contact, while a trashed contact does not block a new one with the same email.
  uniques: [
    {
      name: 'contacts_org_email_live_unique',
      expression:
        'create unique index "contacts_org_email_live_unique" on "contacts" ("organization_id", "email") where "deleted_at" is null and "email" is not null',
    },
  ],
  indexes: [
    {
      name: 'contacts_org_company_name_idx',
      expression:
        'create index "contacts_org_company_name_idx" on "contacts" ("organization_id", "company_id", lower("first_name"), lower("last_name"), "created_at") where "deleted_at" is null',
    },
    // The trash only (list in deletion order, purge by date): a live contact's writes skip it (Migration20261126122000).
    {
      name: 'contacts_org_deleted_idx',
      expression: 'create index "contacts_org_deleted_idx" on "contacts" ("organization_id", "deleted_at") where "deleted_at" is not null',
    },
    // /v1's contact list and sync walk live contacts in (updated_at, id) order: a page reads its rows, never sorts.
    {
      name: 'contacts_org_updated_live_idx',
      expression:
        'create index "contacts_org_updated_live_idx" on "contacts" ("organization_id", "updated_at", "id") where "deleted_at" is null',
    },
  ],
  properties: {
    ...timestamps,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    /** Lowercased and trimmed before it is stored; never replaced once set by an upsert. */
    email: p.text().nullable(),
    firstName: p.text().nullable(),
    lastName: p.text().nullable(),
    phone: p.text().nullable(),
    jobTitle: p.text().nullable(),
    website: p.text().nullable(),
    linkedin: p.text().nullable(),
    tags: p.array().default([]),
    custom: p.json<Record<string, unknown>>().default('{}'),
    /** Origin of the record; set when the contact is created and never changed by later upserts. */
    source: p.text().default('api'),
    leadScore: p.integer().default(0),
    /** The score adjuster's last answer, -15..15, applied on top of the computed base score. */
    scoreAdjustment: p.integer().default(0),
    /** A manual override wins over the computed score while it is set. */
    scoreOverride: p.integer().nullable(),
    stage: p.text().default('lead'),
    company: () => p.manyToOne(Company).nullable().deleteRule('set null'),
    emailConsent: p.boolean().default(false),
    smsConsent: p.boolean().default(false),
    /** Soft-delete marker: set while the contact is in trash. */
    deletedAt: p.datetime().nullable(),
  },
});
export class Contact extends ContactSchema.class {}
ContactSchema.setClass(Contact);
