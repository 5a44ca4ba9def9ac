/**
 * How `leadwire export contacts` writes records: CSV with a fixed header (RFC 4180 quoting) or JSON lines. The CSV
 * columns are the contact record's fields in the API's order, fixed so that a script reading the file keeps working
 * when the API adds a field (JSONL carries every field as the API sends it).
 */
import type { ContactRecord } from '../../client/types.ts';

export type ExportFormat = 'csv' | 'jsonl';

/** The CSV columns, in order: the header row names them exactly so. */
export const CONTACT_COLUMNS = [
  'id',
  'email',
  'firstName',
  'lastName',
  'phone',
  'jobTitle',
  'tags',
  'leadScore',
  'stage',
  'source',
  'companyId',
  'createdAt',
  'updatedAt',
] as const satisfies readonly (keyof ContactRecord)[];

/**
 * One CSV field. Null is an empty cell; tags are joined with `;` (how `leadwire import` splits them, so an exported
 * file imports again as it is). A field holding a quote, a comma or a line break is quoted, quotes doubled; nothing
 * else is changed (no formula escaping: it would alter values such as `+44 20 7946 0000`).
 */
export function csvField(value: ContactRecord[keyof ContactRecord] | undefined): string {
  const text = value === null || value === undefined ? '' : Array.isArray(value) ? value.join(';') : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The text of a page of records (and the header first, for CSV), each line ending in `\n`. */
export function formatRecords(format: ExportFormat, records: readonly ContactRecord[], header: boolean): string {
  if (format === 'jsonl') return records.map((r) => `${JSON.stringify(r)}\n`).join('');
  const lines = records.map((r) => `${CONTACT_COLUMNS.map((c) => csvField(r[c])).join(',')}\n`);
  return (header ? `${CONTACT_COLUMNS.join(',')}\n` : '') + lines.join('');
}
