/**
 * The contacts table as the code reads and writes it, listed once: the row type, the select list, the record
 * definition that turns a JSON parameter into rows, and the insert and update lists all derive from this list. The
 * entity (packages/db/src/entities/contact.ts) stays the schema's source for MikroORM and the migrations; a test
 * compares this list with the migrated database's information_schema, so the two cannot drift apart.
 */

/** Types as information_schema spells them (an array as its element type and `[]`), and what pg returns for each. */
interface SqlTypes {
  uuid: string;
  text: string;
  'text[]': string[];
  jsonb: Record<string, unknown>;
  integer: number;
  boolean: boolean;
  'timestamp with time zone': Date | string;
}
type SqlType = keyof SqlTypes;

export interface ColumnSpec {
  type: SqlType;
  nullable: boolean;
  /**
   * False for what a write of the contact's data never sets: its identity and origin (fixed at creation), and the
   * columns that have statements of their own (the score adjuster's step, the trash marker).
   */
  written: boolean;
}

interface ColumnOptions {
  nullable?: boolean;
  written?: boolean;
}

const column = <T extends SqlType, const O extends ColumnOptions = object>(type: T, opts?: O) => ({
  type,
  nullable: (opts?.nullable ?? false) as O['nullable'] extends true ? true : false,
  written: opts?.written ?? true,
});
const nullable = { nullable: true } as const;

export const CONTACT_TABLE = {
  id: column('uuid', { written: false }),
  organization_id: column('uuid', { written: false }),
  email: column('text', nullable),
  first_name: column('text', nullable),
  last_name: column('text', nullable),
  phone: column('text', nullable),
  job_title: column('text', nullable),
  website: column('text', nullable),
  linkedin: column('text', nullable),
  tags: column('text[]'),
  custom: column('jsonb'),
  source: column('text', { written: false }),
  lead_score: column('integer'),
  score_adjustment: column('integer', { written: false }),
  score_override: column('integer', nullable),
  stage: column('text'),
  company_id: column('uuid', nullable),
  email_consent: column('boolean'),
  sms_consent: column('boolean'),
  deleted_at: column('timestamp with time zone', { nullable: true, written: false }),
  created_at: column('timestamp with time zone', { written: false }),
  updated_at: column('timestamp with time zone'),
} as const satisfies Record<string, ColumnSpec>;

type Table = typeof CONTACT_TABLE;
export type ContactColumn = keyof Table;

/** A contacts row as raw SQL returns it, column by column. */
export type ContactRecord = {
  -readonly [K in ContactColumn]: Table[K]['nullable'] extends true ? SqlTypes[Table[K]['type']] | null : SqlTypes[Table[K]['type']];
};

const names = Object.keys(CONTACT_TABLE) as ContactColumn[];

/** Every column, optionally qualified by a table alias: a select or `returning` list. */
export const contactColumns = (alias?: string) => names.map((n) => (alias ? `${alias}.${n}` : n)).join(', ');

/** The select list over the `c` alias that every contact statement uses. */
export const CONTACT_COLUMNS = contactColumns('c');

/** `jsonb_to_record(set)(?::jsonb) as ...`: a JSON row (or array of rows) read back with every column's type. */
export const CONTACT_RECORD = `v(${names.map((n) => `${n} ${CONTACT_TABLE[n].type}`).join(', ')})`;

/** `insert into contacts (...) select ...` from the record `v`: every column. */
export const CONTACT_INSERT = {
  columns: names.join(', '),
  values: names.map((n) => `v.${n}`).join(', '),
};

/** `update contacts c set ...` from the record `v`: every column a write of the contact's data sets. */
export const CONTACT_UPDATE_SET = names
  .filter((n) => CONTACT_TABLE[n].written)
  .map((n) => `${n} = v.${n}`)
  .join(', ');
