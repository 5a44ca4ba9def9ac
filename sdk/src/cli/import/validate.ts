/**
 * The server's rules for one row of POST /v1/contacts/batch-upsert, for `leadwire import --dry-run`: the fields of
 * ContactUpsertInput (packages/core/src/contacts/v1/schemas.ts, on the primitives of packages/core/src/validation), the
 * identity rule and the usable-domain rule of the upsert (contacts/v1/upsert.ts, companies/domain.ts). The SDK takes
 * only types from the server (it ships without zod), so the rules are written again here;
 * sdk/test/import-validate.test.ts holds them equal to the server's by sending a corpus of good and bad rows to a real
 * server. What only the server's data can tell (a companyDomain naming no company, the plan's contact limit) is not
 * checked here.
 */

export interface RowProblem {
  code: 'validation_failed' | 'missing_identity';
  /** The message the server gives the row. */
  message: string;
  /** The fields at fault, as the server's `issues[].path` names them. */
  paths: string[];
}

interface Issue {
  path: string;
  message: string;
}

const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const expected = (what: string, v: unknown) => `Invalid input: expected ${what}, received ${typeName(v)}`;

/** text(max) of the server: trimmed, at most `max` characters, no NUL, no unpaired surrogate. Returns the trimmed value. */
function text(path: string, value: unknown, max: number, out: Issue[]): string | undefined {
  if (typeof value !== 'string') {
    out.push({ path, message: expected('string', value) });
    return undefined;
  }
  const s = value.trim();
  const before = out.length;
  if (s.length > max) out.push({ path, message: `must be at most ${max} characters` });
  if (s.includes('\u0000')) out.push({ path, message: 'must not contain the NUL character (\\u0000)' });
  if (!s.isWellFormed()) out.push({ path, message: 'must not contain an unpaired UTF-16 surrogate' });
  return out.length === before ? s : undefined;
}

/** zod's email format, as the server's schema uses it. */
const EMAIL = /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/;
const SOURCE = /^[A-Za-z0-9._-]{1,40}$/;
const JSON_STRING_MAX = 10_000;
const JSON_KEY_MAX = 100;
const JSON_DEPTH_MAX = 8;
const CUSTOM_KEYS_MAX = 200;

function email(value: unknown, out: Issue[]): string | null | undefined {
  if (value === null || value === undefined) return value;
  const s = text('email', value, 320, out)?.toLowerCase();
  if (s === undefined) return undefined;
  const before = out.length;
  if (!EMAIL.test(s)) out.push({ path: 'email', message: 'email must be a valid email address' });
  // The server's email schema gives its one message to its length check too.
  if (s.length > 254) out.push({ path: 'email', message: 'email must be a valid email address' });
  return out.length === before ? s : undefined;
}

function nullableText(path: string, value: unknown, max: number, out: Issue[]): string | null | undefined {
  return value === null || value === undefined ? value : text(path, value, max, out);
}

function tags(value: unknown, out: Issue[]) {
  if (value === undefined) return;
  if (!Array.isArray(value)) return void out.push({ path: 'tags', message: expected('array', value) });
  value.forEach((tag, i) => {
    const s = text(`tags.${i}`, tag, 100, out);
    if (s === '') out.push({ path: `tags.${i}`, message: 'tags must not be empty' });
  });
  if (value.length > 100) out.push({ path: 'tags', message: 'Too big: expected array to have <=100 items' });
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
    else if (key.length > JSON_KEY_MAX) out.push({ path: at, message: `key must be at most ${JSON_KEY_MAX} characters` });
    else jsonIssues(v, at, depth + 1, out);
  }
}

function custom(value: unknown, out: Issue[]) {
  if (value === undefined) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return void out.push({ path: 'custom', message: expected('record', value) });
  const before = out.length;
  jsonIssues(value, 'custom', 1, out);
  if (out.length > before) return;
  const keys = Object.keys(value);
  if (keys.includes('')) out.push({ path: 'custom.', message: 'Invalid key in record' });
  if (keys.length > CUSTOM_KEYS_MAX) out.push({ path: 'custom', message: `custom may hold at most ${CUSTOM_KEYS_MAX} keys` });
}

/** The server's normalizeDomain (packages/core/src/companies/domain.ts): the bare host, or null when unusable. */
export function normalizeDomain(input: string): string | null {
  const raw = input.trim();
  if (!raw || /\s/.test(raw)) return null;
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`).hostname;
  } catch {
    return null;
  }
  host = host
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^www\./, '');
  if (host.length > 253 || host.startsWith('[')) return null;
  const labels = host.split('.');
  if (labels.length < 2) return null;
  if (!/^([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/.test(labels[labels.length - 1]!)) return null;
  return labels.every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(l)) ? host : null;
}

/** What the server would answer for this row of a batch upsert, when it can be told without the server's data. */
export function validateContactRow(row: Record<string, unknown>): RowProblem | null {
  const issues: Issue[] = [];
  const e = email(row.email, issues);
  const first = nullableText('firstName', row.firstName, 200, issues);
  const last = nullableText('lastName', row.lastName, 200, issues);
  nullableText('phone', row.phone, 50, issues);
  nullableText('title', row.title, 200, issues);
  const domain = nullableText('companyDomain', row.companyDomain, 2048, issues);
  tags(row.tags, issues);
  custom(row.custom, issues);
  if (row.source !== undefined) {
    if (typeof row.source !== 'string') issues.push({ path: 'source', message: expected('string', row.source) });
    else if (!SOURCE.test(row.source))
      issues.push({ path: 'source', message: 'source must be 1-40 characters: letters, digits, dot, dash or underscore' });
  }
  if (issues.length) {
    return {
      code: 'validation_failed',
      message: `Validation failed: ${issues.map((i) => `${i.path || '(row)'}: ${i.message}`).join('; ')}`,
      paths: [...new Set(issues.map((i) => i.path))],
    };
  }
  if (!(e || (domain && first?.trim() && last?.trim()))) {
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
