import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.ts';
import { Contact } from './contact.ts';
import { Form } from './form.ts';
import { Organization } from './organization.ts';

/**
 * Consent with evidence (issue 30): one row per consent question a person answered, confirmed or withdrew, never
 * changed afterwards. What was asked (the exact text and its version), on which form and page, when, how (single or
 * double opt-in, or the unsubscribe link), and a keyed hash of the address it came from (never the address).
 */
export const ConsentEntrySchema = defineEntity({
  name: 'ConsentEntry',
  tableName: 'consent_entries',
  indexes: [{ name: 'consent_entries_contact_idx', properties: ['contact', 'createdAt'] }],
  uniques: [{ name: 'consent_entries_confirms_unique', properties: ['confirms'] }],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).deleteRule('cascade'),
    /** `email_marketing`, `sms`, or a purpose the owner named. */
    purpose: p.text(),
    /**
     * granted: consent given (ticked on a single opt-in form, or a double opt-in confirmed); declined: shown and not
     * ticked; pending: ticked on a double opt-in form, waiting for the confirmation link until `expiresAt`; withdrawn.
     */
    status: p.enum(['granted', 'declined', 'pending', 'withdrawn'] as const),
    method: p.enum(['single_opt_in', 'double_opt_in', 'unsubscribe_link'] as const),
    /** The exact words shown beside the checkbox, and their version, as the form had them. */
    text: p.text().nullable(),
    version: p.text().nullable(),
    form: () => p.manyToOne(Form).nullable().deleteRule('set null'),
    formName: p.text().nullable(),
    pageUrl: p.text().nullable(),
    /** HMAC-SHA256 of the client address under the organization's consent key (consent/keys.ts); never the address. */
    ipHash: p.text().nullable(),
    /** A pending entry's deadline: its link no longer confirms after it. */
    expiresAt: p.datetime().nullable(),
    /** A confirmation: the pending entry it confirms (at most one confirmation each). */
    confirms: p.uuid().nullable(),
  },
});
export class ConsentEntry extends ConsentEntrySchema.class {}
ConsentEntrySchema.setClass(ConsentEntry);

/**
 * The organization's secret for consent links (HMAC-signed, so a link cannot be forged or altered) and for hashing
 * addresses. Made on first use; per organization, so one workspace's hashes say nothing about another's.
 */
export const ConsentKeySchema = defineEntity({
  name: 'ConsentKey',
  tableName: 'consent_keys',
  properties: {
    organization: () => p.manyToOne(Organization).primary().deleteRule('cascade'),
    /** 32 random bytes, base64url. */
    key: p.text(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
});
export class ConsentKey extends ConsentKeySchema.class {}
ConsentKeySchema.setClass(ConsentKey);
