/**
 * One row of POST /v1/contacts/batch-upsert judged without the server, for `leadwire import --dry-run`. The fields are
 * checked by the /v1 OpenAPI document's own ContactUpsertInput, compiled into ../../generated/contact-row.ts (ajv
 * standalone, by `npm run sdk:generate`; the contract test fails while it is stale), so the check and the server's
 * schema cannot drift. What the document states only in words stays here: the server trims text, emails have zod's
 * email format, no NUL or unpaired surrogate is stored, `custom`'s limits, the identity rule and the usable-domain rule
 * (with the server's own normalizeDomain, generated from its source). sdk/test/import-validate.test.ts sends a corpus
 * of good and bad rows to a real server and holds the outcomes, codes and fields equal. What only the server's data
 * can tell (a companyDomain naming no company, the plan's contact limit) is not checked here.
 */
import { CONTACT_FIELDS, validate as validateGenerated } from '../../generated/contact-row.ts';
import { normalizeDomain } from '../../generated/domain.ts';

export interface RowProblem {
  code: 'validation_failed' | 'missing_identity';
  /** What is wrong, field by field: `Validation failed: firstName: must be at most 200 characters`. */
  message: string;
  /** The fields at fault, as the server's `issues[].path` names them. */
  paths: string[];
}

interface Issue {
  path: string;
  message: string;
}

/** What ajv's standalone code reports (ajv's ErrorObject, as far as it is read here). */
interface SchemaError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: { type?: string; limit?: number; pattern?: string; propertyName?: string };
  propertyName?: string;
}

const check = validateGenerated as ((row: unknown) => boolean) & { errors?: SchemaError[] | null };

/** The server's text fields: trimmed before their length is checked (the schema's maxLength is of the trimmed text). */
const TEXT_FIELDS = ['email', 'firstName', 'lastName', 'phone', 'title', 'companyDomain'];

/** zod's email format, which the server's email schema applies after trimming and lowercasing. */
const EMAIL = /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/;
const EMAIL_MAX = 254;
const JSON_STRING_MAX = 10_000;
const JSON_DEPTH_MAX = 8;
const CUSTOM_KEYS_MAX = 200;

const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const dotted = (pointer: string) => pointer.slice(1).split('/').join('.');
const valueAt = (row: unknown, path: string) =>
  path === '' ? row : path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], row);

/** ajv's errors as the server's issues: the field's dotted path and a reason a person can act on. */
function schemaIssues(row: Record<string, unknown>, errors: SchemaError[]): Issue[] {
  const issues: Issue[] = [];
  for (const e of errors) {
    // A nullable field fails both branches of its anyOf: the reason is the non-null branch's.
    if (e.keyword === 'anyOf' || (e.keyword === 'type' && e.params.type === 'null')) continue;
    const path = dotted(e.instancePath);
    const nullable = /\/anyOf\/0\//.test(e.schemaPath) ? ' or null' : '';
    const key = e.propertyName;
    if (e.keyword === 'propertyNames') continue;
    if (key !== undefined) {
      const at = `${path}.${key}`;
      if (e.keyword === 'minLength') issues.push({ path: at, message: 'key must not be empty' });
      else if (e.keyword === 'maxLength') issues.push({ path: at, message: `key must be at most ${e.params.limit} characters` });
      else issues.push({ path: at, message: `key is not allowed (${e.keyword})` });
      continue;
    }
    const value = valueAt(row, path);
    const message =
      e.keyword === 'type'
        ? `expected ${e.params.type === 'object' ? 'an object' : e.params.type}${nullable}, received ${typeName(value)}`
        : e.keyword === 'maxLength'
          ? `must be at most ${e.params.limit} characters`
          : e.keyword === 'minLength'
            ? e.params.limit === 1
              ? 'must not be empty'
              : `must be at least ${e.params.limit} characters`
            : e.keyword === 'maxItems'
              ? `must have at most ${e.params.limit} items`
              : e.keyword === 'pattern'
                ? `must match ${e.params.pattern} (got ${JSON.stringify(value)})`
                : `is not valid (${e.keyword})`;
    issues.push({ path, message });
  }
  return issues;
}

function unstorable(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (!s.isWellFormed()) return 'must not contain an unpaired UTF-16 surrogate';
  return undefined;
}

/** The walk of the server's jsonObject(): every string, key and level inside `custom`. */
function jsonIssues(value: unknown, path: string, depth: number, out: Issue[]) {
  if (typeof value === 'string') {
    const reason = unstorable(value);
    if (reason) out.push({ path, message: reason });
    else if (value.length > JSON_STRING_MAX) out.push({ path, message: `must be at most ${JSON_STRING_MAX} characters` });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (depth > JSON_DEPTH_MAX) return void out.push({ path, message: `is nested more than ${JSON_DEPTH_MAX} levels deep` });
  if (Array.isArray(value)) return value.forEach((v, i) => jsonIssues(v, `${path}.${i}`, depth + 1, out));
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    const at = `${path}.${key}`;
    const prototypeHolder = key === 'constructor' && v !== null && typeof v === 'object' && Object.hasOwn(v, 'prototype');
    if (key === '__proto__') out.push({ path: at, message: 'the key __proto__ is not allowed' });
    else if (prototypeHolder) out.push({ path: at, message: 'the key constructor holding prototype is not allowed' });
    else if (unstorable(key)) out.push({ path: at, message: `key ${unstorable(key)!}` });
    else jsonIssues(v, at, depth + 1, out);
  }
}

/** The rules the document states in words, for the fields its schema found well-typed. */
function proseIssues(row: Record<string, unknown>, failed: Set<string>): Issue[] {
  const out: Issue[] = [];
  const texts = (field: string): [string, string][] => {
    const v = row[field];
    if (field === 'tags') return Array.isArray(v) ? v.map((t, i) => [`tags.${i}`, t as string]) : [];
    return typeof v === 'string' ? [[field, v]] : [];
  };
  for (const field of [...TEXT_FIELDS, 'tags']) {
    if (failed.has(field)) continue;
    for (const [path, s] of texts(field)) {
      const reason = unstorable(s);
      if (reason) out.push({ path, message: reason });
    }
  }
  if (typeof row.email === 'string' && !failed.has('email') && !out.some((i) => i.path === 'email')) {
    const email = row.email.toLowerCase();
    if (!EMAIL.test(email)) out.push({ path: 'email', message: 'email must be a valid email address' });
    if (email.length > EMAIL_MAX)
      out.push({ path: 'email', message: `email must be a valid email address (at most ${EMAIL_MAX} characters)` });
  }
  if (row.custom !== undefined && !failed.has('custom')) {
    const before = out.length;
    jsonIssues(row.custom, 'custom', 1, out);
    if (out.length === before && Object.keys(row.custom as object).length > CUSTOM_KEYS_MAX)
      out.push({ path: 'custom', message: `custom may hold at most ${CUSTOM_KEYS_MAX} keys` });
  }
  return out;
}

const fieldOf = (path: string) => path.split('.')[0]!;
const order = (path: string) => {
  const i = CONTACT_FIELDS.indexOf(fieldOf(path));
  return i < 0 ? CONTACT_FIELDS.length : i;
};

/** What the server would answer for this row of a batch upsert, when it can be told without the server's data. */
export function validateContactRow(input: Record<string, unknown>): RowProblem | null {
  const row: Record<string, unknown> = { ...input };
  for (const f of TEXT_FIELDS) if (typeof row[f] === 'string') row[f] = row[f].trim();
  if (Array.isArray(row.tags)) row.tags = row.tags.map((t: unknown) => (typeof t === 'string' ? t.trim() : t));
  const schema = check(row) ? [] : schemaIssues(row, check.errors ?? []);
  const issues = [...schema, ...proseIssues(row, new Set(schema.map((i) => fieldOf(i.path))))];
  if (issues.length) {
    // Field by field in the schema's order, as the server lists them.
    const sorted = issues.map((issue, i) => ({ issue, i })).sort((a, b) => order(a.issue.path) - order(b.issue.path) || a.i - b.i);
    return {
      code: 'validation_failed',
      message: `Validation failed: ${sorted.map(({ issue }) => `${issue.path || '(row)'}: ${issue.message}`).join('; ')}`,
      paths: [...new Set(sorted.map(({ issue }) => issue.path))],
    };
  }
  const domain = row.companyDomain;
  const named = (v: unknown) => typeof v === 'string' && v !== '';
  if (!(named(row.email) || (named(domain) && named(row.firstName) && named(row.lastName)))) {
    return {
      code: 'missing_identity',
      message: 'A contact needs an email, or companyDomain together with firstName and lastName',
      paths: [],
    };
  }
  if (typeof domain === 'string' && normalizeDomain(domain) === null) {
    return {
      code: 'validation_failed',
      message: `companyDomain ${JSON.stringify(domain)} is not a usable domain`,
      paths: ['companyDomain'],
    };
  }
  return null;
}
