import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './base.ts';

export const PLANS = ['starter', 'pro', 'max'] as const;
export type Plan = (typeof PLANS)[number];

export const OrganizationSchema = defineEntity({
  name: 'Organization',
  tableName: 'organizations',
  properties: {
    ...timestamps,
    name: p.text(),
    plan: p.enum(PLANS).default('starter'),
    /** Extra contact capacity bought as the booster add-on, added to the plan's cap. */
    contactBooster: p.integer().default(0),
    /** Set when a nonprofit verification was recorded and the nonprofit plan activated. */
    nonprofitActivatedAt: p.datetime().nullable(),
    /**
     * The organization's own website (a bare host such as `example.com`): links to it, or to its subdomains, in texts
     * Leadwire sends are rewritten to tracked links. Null: no link is rewritten.
     */
    siteDomain: p.text().nullable(),
  },
});
export class Organization extends OrganizationSchema.class {}
OrganizationSchema.setClass(Organization);

/**
 * An organization's active (not trashed) contacts, maintained with every insert and delete so the plan cap is enforced
 * without counting rows on the hot path. A row of its own, not a column of `organizations`: every new contact bumps
 * it, and on the organization's row those updates met the foreign-key checks (`for key share`) that every contact and
 * outbox insert takes there, turning each into a MultiXact under concurrency; the organization row now stays still.
 * Created with its organization (`bootstrap`).
 */
export const ContactCounterSchema = defineEntity({
  name: 'ContactCounter',
  tableName: 'contact_counters',
  properties: {
    organization: () => p.manyToOne(Organization).primary().deleteRule('cascade'),
    contactCount: p.integer().default(0),
  },
});
export class ContactCounter extends ContactCounterSchema.class {}
ContactCounterSchema.setClass(ContactCounter);
