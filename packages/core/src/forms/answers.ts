import { z } from 'zod';
import type { Issue } from '../errors.ts';
import { isHttpUrl, unstorableReason } from '../validation/index.ts';
import type { FormField } from './schemas.ts';

/*
 * What a submission body means for a form: answers keyed by field id, the reserved keys (honeypot, CAPTCHA token,
 * attribution), and every problem found, one per field. Pure, so the JSON and the urlencoded routes share it.
 */

export type Answer = string | number | boolean;

export interface Attribution {
  utm: Record<string, string>;
  referrer: string | null;
  landingPage: string | null;
}

export interface ParsedSubmission {
  /** `_hp_field` was filled: a bot. The caller fakes a success and keeps nothing. */
  honeypot: boolean;
  answers: Record<string, Answer>;
  captchaToken: string | null;
  attribution: Attribution;
  issues: Issue[];
}

export const HONEYPOT = '_hp_field';
/** The CAPTCHA token keys of the spec, plus hCaptcha's own name for the token its widget also sends as g-recaptcha-response. */
export const CAPTCHA_KEYS = ['cf-turnstile-response', 'g-recaptcha-response', 'h-captcha-response', '_captchaToken'] as const;
const UTM = /^utm_([a-z0-9_]{1,40})$/i;
const MAX_UTM = 20;
const MAX_URL = 2048;
const MAX_TEXT = 10_000;
const MAX_LINE = 1_000;

const Email = z.email();
const TRUE = new Set(['true', 'on', 'yes', '1']);
const FALSE = new Set(['false', 'off', 'no', '0']);

/** A body as key/value pairs: the first value of a repeated urlencoded key counts. */
function entriesOf(body: Record<string, unknown> | URLSearchParams): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const pairs = body instanceof URLSearchParams ? [...body.entries()] : Object.entries(body);
  for (const [k, v] of pairs) if (!out.has(k)) out.set(k, v);
  return out;
}

const asText = (v: unknown): string | undefined =>
  typeof v === 'string'
    ? v.trim()
    : typeof v === 'number' && Number.isFinite(v)
      ? String(v)
      : typeof v === 'boolean'
        ? String(v)
        : undefined;

/** One field's value, normalised to its type; a string is the problem found. */
function coerce(f: FormField, raw: unknown): { value?: Answer; problem?: string } {
  if (raw === null || raw === undefined) return {};
  if (f.type === 'checkbox') {
    if (typeof raw === 'boolean') return { value: raw };
    const s = asText(raw)?.toLowerCase();
    if (s === undefined) return { problem: `${f.label} must be checked or not` };
    if (s === '') return {};
    if (TRUE.has(s)) return { value: true };
    if (FALSE.has(s)) return { value: false };
    return { problem: `${f.label} must be checked or not` };
  }
  const s = asText(raw);
  if (s === undefined) return { problem: `${f.label} must be a text value` };
  if (s === '') return {};
  const bad = unstorableReason(s);
  if (bad) return { problem: `${f.label} ${bad}` };
  const max = f.type === 'textarea' ? MAX_TEXT : f.type === 'url' ? MAX_URL : MAX_LINE;
  if (s.length > max) return { problem: `${f.label} must be at most ${max} characters` };
  switch (f.type) {
    case 'email':
      return s.length <= 254 && Email.safeParse(s.toLowerCase()).success
        ? { value: s.toLowerCase() }
        : { problem: `${f.label} must be a valid email address` };
    case 'number': {
      const n = typeof raw === 'number' ? raw : Number(s);
      return Number.isFinite(n) ? { value: n } : { problem: `${f.label} must be a number` };
    }
    case 'url':
      return isHttpUrl(s) ? { value: s } : { problem: `${f.label} must be a web address (https://…)` };
    case 'select': {
      const option = f.options?.find((o) => o.toLowerCase() === s.toLowerCase());
      return option ? { value: option } : { problem: `${f.label} must be one of: ${f.options?.join(', ')}` };
    }
    default:
      return { value: s };
  }
}

/** The body's value for a field: by its id as written, else its id or label in any case. */
function rawFor(f: FormField, entries: Map<string, unknown>, lowered: Map<string, unknown>): unknown {
  if (entries.has(f.id)) return entries.get(f.id);
  return lowered.get(f.id.toLowerCase()) ?? lowered.get(f.label.trim().toLowerCase());
}

function attributionOf(entries: Map<string, unknown>, issues: Issue[]): Attribution {
  const out: Attribution = { utm: {}, referrer: null, landingPage: null };
  const take = (key: string, max: number): string | null => {
    const v = entries.get(key);
    if (v === undefined || v === null || v === '') return null;
    if (typeof v !== 'string' || v.length > max || unstorableReason(v)) {
      issues.push({ path: key, message: `${key} must be a text of at most ${max} characters` });
      return null;
    }
    return v.trim() || null;
  };
  for (const key of entries.keys()) {
    const m = UTM.exec(key);
    if (!m) continue;
    if (Object.keys(out.utm).length >= MAX_UTM) {
      issues.push({ path: key, message: `at most ${MAX_UTM} utm_ parameters are recorded` });
      break;
    }
    const v = take(key, 500);
    if (v !== null) out.utm[m[1]!.toLowerCase()] = v;
  }
  out.referrer = take('_referrer', MAX_URL);
  out.landingPage = take('_landingPage', MAX_URL);
  return out;
}

export function parseSubmission(fields: readonly FormField[], body: Record<string, unknown> | URLSearchParams): ParsedSubmission {
  const entries = entriesOf(body);
  const hp = entries.get(HONEYPOT);
  const honeypot = hp !== undefined && hp !== null && hp !== '' && hp !== false;
  const lowered = new Map<string, unknown>();
  for (const [k, v] of entries) if (!lowered.has(k.trim().toLowerCase())) lowered.set(k.trim().toLowerCase(), v);

  const issues: Issue[] = [];
  const answers: Record<string, Answer> = {};
  for (const f of fields) {
    const { value, problem } = coerce(f, rawFor(f, entries, lowered));
    if (problem) issues.push({ path: f.id, message: problem });
    else if (value === undefined || (f.type === 'checkbox' && value === false && f.required)) {
      if (f.required) issues.push({ path: f.id, message: `${f.label} is required` });
    } else answers[f.id] = value;
  }
  const token = CAPTCHA_KEYS.map((k) => entries.get(k)).find((v): v is string => typeof v === 'string' && v.trim() !== '');
  if (token && token.length > MAX_TEXT) issues.push({ path: '_captchaToken', message: 'the CAPTCHA token is too long' });
  const attribution = attributionOf(entries, issues);
  return { honeypot, answers, captchaToken: token?.trim() ?? null, attribution, issues };
}

/** Field ids people commonly give the contact's own fields, compared without case, `_`, `-` or spaces. */
const CONTACT_KEYS: Record<string, 'firstName' | 'lastName' | 'name' | 'phone' | 'title'> = {
  firstname: 'firstName',
  givenname: 'firstName',
  lastname: 'lastName',
  surname: 'lastName',
  familyname: 'lastName',
  name: 'name',
  fullname: 'name',
  phone: 'phone',
  phonenumber: 'phone',
  mobile: 'phone',
  jobtitle: 'title',
  title: 'title',
};

type PersonKey = 'email' | 'firstName' | 'lastName' | 'phone' | 'title';

/**
 * What a submission says about the person: their email (the first email field) and the usual contact fields, with the
 * field each came from (so a value the contact cannot take is reported against that field).
 */
export function contactOf(fields: readonly FormField[], answers: Record<string, Answer>) {
  const person: Partial<Record<PersonKey, string>> = {};
  const fieldOf: Partial<Record<PersonKey, string>> = {};
  const set = (key: PersonKey, value: string | undefined, fieldId: string) => {
    if (value === undefined || person[key] !== undefined) return;
    person[key] = value;
    fieldOf[key] = fieldId;
  };
  for (const f of fields) {
    const v = answers[f.id];
    if (typeof v !== 'string') continue;
    if (f.type === 'email') {
      set('email', v, f.id);
      continue;
    }
    const key = f.type === 'tel' ? 'phone' : CONTACT_KEYS[f.id.toLowerCase().replace(/[-_\s]/g, '')];
    if (key === 'name') {
      const [first, ...rest] = v.split(/\s+/);
      set('firstName', first, f.id);
      if (rest.length) set('lastName', rest.join(' '), f.id);
    } else if (key) set(key, v, f.id);
  }
  return { person, fieldOf };
}
