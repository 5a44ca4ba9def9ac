/**
 * From file columns (CSV headers, JSONL keys) to contact upsert fields: by name, ignoring case, spaces, dashes and
 * underscores ("First Name", first_name, firstName), `custom.<key>` into custom, and --map for everything else.
 */
import { UsageError } from '../exit-codes.ts';

export const CONTACT_FIELDS = ['email', 'firstName', 'lastName', 'phone', 'title', 'companyDomain', 'tags', 'source'] as const;
export type ContactField = (typeof CONTACT_FIELDS)[number];

/** Where one column goes: a contact field, a key of `custom`, or nowhere. */
export type Target = { field: ContactField } | { custom: string } | { ignore: true };

const ALIASES: Record<string, ContactField> = {
  ...Object.fromEntries(CONTACT_FIELDS.map((f) => [normalizeName(f), f])),
  emailaddress: 'email',
  phonenumber: 'phone',
  jobtitle: 'title',
  domain: 'companyDomain',
  tag: 'tags',
};

/** The columns of our own failed-rows file: ignored, so a corrected failed file can be imported as it is. */
export const FAILED_FILE_COLUMNS = ['import_line', 'import_error_code', 'import_error_message', 'import_raw'];

/** "First Name", first_name, first-name and firstName all become "firstname". */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[\s_-]+/g, '');
}

function targetOfName(name: string): Target | undefined {
  const custom = /^custom\.(.+)$/i.exec(name.trim());
  if (custom) return { custom: custom[1]!.trim() };
  const field = ALIASES[normalizeName(name)];
  return field ? { field } : undefined;
}

/**
 * Parses `--map "Header=field,Other=custom.key,Unwanted=-"` into header → target. A field is a contact field (matched
 * like a header), `custom.<key>`, or `-` to ignore the column.
 */
export function parseMapOption(value: string | undefined): Map<string, Target> {
  const map = new Map<string, Target>();
  if (value === undefined) return map;
  for (const pair of value.split(',')) {
    if (!pair.trim()) continue;
    const eq = pair.lastIndexOf('=');
    if (eq <= 0) throw new UsageError(`--map takes "Header=field" pairs separated by commas, got ${JSON.stringify(pair)}`);
    const header = pair.slice(0, eq).trim();
    const to = pair.slice(eq + 1).trim();
    const target = to === '-' ? { ignore: true as const } : targetOfName(to);
    if (!target)
      throw new UsageError(
        `--map: unknown field ${JSON.stringify(to)} for ${JSON.stringify(header)}; fields are ${CONTACT_FIELDS.join(', ')}, custom.<key>, or - to ignore`,
      );
    map.set(header, target);
  }
  return map;
}

export interface Mapper {
  /** The target of a column name; undefined for unknown columns (reported once through onUnknown). */
  targetOf(name: string): Target | undefined;
}

/** A mapper for names met as the file is read (JSONL keys): unknown ones are reported once each. */
export function mapperOf(overrides: Map<string, Target>, onUnknown: (name: string) => void): Mapper {
  const cache = new Map<string, Target | undefined>();
  return {
    targetOf(name) {
      if (cache.has(name)) return cache.get(name);
      let target = overrides.get(name) ?? (FAILED_FILE_COLUMNS.includes(name) ? { ignore: true as const } : targetOfName(name));
      if (!target) onUnknown(name);
      if (target && 'ignore' in target) target = undefined;
      cache.set(name, target);
      return target;
    },
  };
}

/**
 * The targets of a CSV header row, one per column (undefined: ignored). Refuses, as usage errors, --map entries naming
 * no column, two columns feeding one field, and a header that maps to nothing at all.
 */
export function mapHeaders(headers: string[], overrides: Map<string, Target>, onUnknown: (name: string) => void): (Target | undefined)[] {
  for (const header of overrides.keys()) {
    if (!headers.includes(header))
      throw new UsageError(
        `--map names the column ${JSON.stringify(header)}, which the file does not have (columns: ${headers.join(', ')})`,
      );
  }
  const mapper = mapperOf(overrides, onUnknown);
  const targets = headers.map((h) => mapper.targetOf(h));
  const seen = new Map<string, string>();
  targets.forEach((t, i) => {
    if (!t || 'ignore' in t) return;
    const key = 'field' in t ? t.field : `custom.${t.custom}`;
    const other = seen.get(key);
    if (other !== undefined)
      throw new UsageError(
        `the columns ${JSON.stringify(other)} and ${JSON.stringify(headers[i])} both map to ${key}; use --map to send one of them elsewhere (Column=-)`,
      );
    seen.set(key, headers[i]!);
  });
  if (seen.size === 0)
    throw new UsageError(
      `no column maps to a contact field (columns: ${headers.join(', ')}); name them like ${CONTACT_FIELDS.join(', ')} or use --map "Column=field"`,
    );
  return targets;
}

function splitTags(value: string): string[] {
  return value
    .split(/[;,]/)
    .map((t) => t.trim())
    .filter(Boolean);
}

/** The upsert body of one CSV row; undefined when every mapped cell is empty (a blank row). Empty cells are omitted, so they never clear stored data. */
export function bodyOfCsv(values: string[], targets: (Target | undefined)[]): Record<string, unknown> | undefined {
  const body: Record<string, unknown> = {};
  const custom: Record<string, string> = {};
  targets.forEach((t, i) => {
    const value = values[i]?.trim();
    if (!t || 'ignore' in t || !value) return;
    if ('custom' in t) custom[t.custom] = value;
    else if (t.field === 'tags') {
      const tags = splitTags(value);
      if (tags.length) body.tags = tags;
    } else body[t.field] = value;
  });
  if (Object.keys(custom).length) body.custom = custom;
  return Object.keys(body).length ? body : undefined;
}

/**
 * The upsert body of one JSONL object. Values go as they are (a JSON null clears a field, as in the API); `custom`
 * objects and `custom.<key>` keys merge into custom; a tags string is split like a CSV cell.
 */
export function bodyOfJson(row: Record<string, unknown>, mapper: Mapper): Record<string, unknown> | undefined {
  const body: Record<string, unknown> = {};
  let custom: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(row)) {
    if (key === 'custom' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      custom = { ...custom, ...(value as Record<string, unknown>) };
      continue;
    }
    const t = mapper.targetOf(key);
    if (!t || 'ignore' in t) continue;
    if ('custom' in t) custom = { ...custom, [t.custom]: value };
    else body[t.field] = t.field === 'tags' && typeof value === 'string' ? splitTags(value) : value;
  }
  if (custom) body.custom = custom;
  return Object.keys(body).length ? body : undefined;
}
