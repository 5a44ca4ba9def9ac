import type { DB, Selectable } from '@leadwire/db';

/**
 * The contacts table as the code reads and writes it. Columns and their types come from the entity
 * (packages/db/src/entities/contact.ts) through the database type; this file lists only their names, for the select,
 * insert and update lists, and the compiler holds that list to the entity both ways: a column missing from it, or one
 * the entity lacks, fails `tsc`.
 */

/** A contacts row as a statement returns it, column by column. */
export type ContactRecord = Selectable<DB['contacts']>;
export type ContactColumn = keyof ContactRecord;

/** Every column, in the table's order. */
export const CONTACT_COLUMN_NAMES = [
  'id',
  'organization_id',
  'email',
  'first_name',
  'last_name',
  'phone',
  'job_title',
  'website',
  'linkedin',
  'tags',
  'custom',
  'source',
  'lead_score',
  'score_adjustment',
  'score_override',
  'stage',
  'company_id',
  'email_consent',
  'sms_consent',
  'deleted_at',
  'created_at',
  'updated_at',
] as const satisfies readonly ContactColumn[];

/** Compiles only while the list above names every column of the entity. */
type Complete<Missing extends never> = Missing;
export type ContactColumnsListed = Complete<Exclude<ContactColumn, (typeof CONTACT_COLUMN_NAMES)[number]>>;

/**
 * What a write of the contact's data never sets: its identity and origin (fixed at creation), and the columns that
 * have statements of their own (the score adjuster's step, the trash marker).
 */
type Unwritten = Extract<ContactColumn, 'id' | 'organization_id' | 'source' | 'score_adjustment' | 'deleted_at' | 'created_at'>;
export type WrittenColumn = Exclude<ContactColumn, Unwritten>;

/** Every column qualified by `alias`, as a typed select list: `.select(contactColumnsOf('c'))`. */
export const contactColumnsOf = <A extends string>(alias: A) => CONTACT_COLUMN_NAMES.map((n) => `${alias}.${n}` as const);
