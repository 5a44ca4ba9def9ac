import { z } from 'zod';

/*
 * The primitives every input schema is built from, so that what PostgreSQL refuses is refused here first, as a 400
 * naming the field, instead of surfacing as a 500 from the database. PostgreSQL text cannot hold NUL; jsonb refuses
 * `\u0000` and unpaired surrogates; a lone surrogate in a text column is silently stored as U+FFFD by the driver.
 */

/** Largest value of a PostgreSQL `int` (int4) column. */
export const INT4_MAX = 2_147_483_647;

/** Documented maxima (docs/partners.md, "Input limits"); a string field without one of its own uses these. */
export const LIMITS = {
  /** Names, titles, short labels. */
  name: 200,
  /** A string value anywhere inside a JSON-stored object (`custom`, `payload`, `evidence`). */
  jsonString: 10_000,
  /** A key anywhere inside a JSON-stored object. */
  jsonKey: 100,
  /** Levels of nesting inside a JSON-stored object (the object itself is level 1). */
  jsonDepth: 8,
} as const;

/** What a string must not contain to be stored: NUL, or a UTF-16 surrogate without its pair. */
export function unstorableReason(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (!s.isWellFormed()) return 'must not contain an unpaired UTF-16 surrogate';
  return undefined;
}

/**
 * A string of at most `max` characters that PostgreSQL can store. Trimmed unless `trim: false` (passwords are taken
 * as typed). Chain `.min()`, `.regex()`, `.nullish()` and `.meta()` as on any zod string.
 */
export function text(max: number, opts: { trim?: boolean } = {}) {
  const base = opts.trim === false ? z.string() : z.string().trim();
  return base
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !s.includes('\u0000'), 'must not contain the NUL character (\\u0000)')
    .refine((s) => s.isWellFormed(), 'must not contain an unpaired UTF-16 surrogate');
}

/**
 * C0 controls (tab, line feed and carriage return among them), DEL and the C1 controls. None is ever part of a URL: the
 * WHATWG parser silently drops tabs and line breaks and escapes the rest, so the URL requested is not the one written,
 * and a stored URL holding one breaks whatever copies it into a header (a redirect's Location) or a log line.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
export const hasControlCharacter = (s: string): boolean => CONTROL_CHARACTER.test(s);

const isHttpScheme = (s: string) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol);

/** An absolute http:// or https:// URL without control characters: what a redirect, a link or a request can use. */
export const isHttpUrl = (s: string): boolean => !hasControlCharacter(s) && isHttpScheme(s);

/**
 * A URL as a user writes it (a redirect, a receiver, a website): `text` of at most `max` characters with no control
 * character anywhere, refused as a 400 naming the field. Chain the field's own rules (scheme, canonical form) after it.
 */
export function urlText(name: string, max = 2048) {
  // NUL has text()'s own message.
  return text(max).refine(
    (s) => !hasControlCharacter(s.replaceAll('\u0000', '')),
    `${name} must not contain control characters (line breaks, tabs and the like)`,
  );
}

/** An absolute http:// or https:// URL as written (stored as written; see urlText). */
export function httpUrl(name: string, max = 2048) {
  // A control character has its message already: one problem, one message.
  return urlText(name, max).refine((s) => hasControlCharacter(s) || isHttpScheme(s), `${name} must be an http(s) URL`);
}

/** A whole number in [min, max]; the default range is what a PostgreSQL int column holds. */
export function int(opts: { min?: number; max?: number; message?: string } = {}) {
  const { min = -INT4_MAX - 1, max = INT4_MAX, message } = opts;
  return z
    .number(message ? { message } : undefined)
    .int(message ?? 'must be a whole number')
    .min(min, message ?? `must be ${min} or more`)
    .max(max, message ?? `must be ${max} or less`);
}

type Issue = { path: PropertyKey[]; message: string };
/** One refusal names enough to fix the input; a 1 MB body of bad strings must not produce a 1 MB answer. */
const MAX_ISSUES = 20;

/**
 * Keys that are plain data to JSON but name prototypes to JavaScript. They are refused rather than stored: stored
 * data is merged, copied and handed to integrations, and any of those could one day treat them as live.
 */
function dangerousKey(key: string, value: unknown): string | undefined {
  if (key === '__proto__') return 'the key __proto__ is not allowed';
  if (key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype')) {
    return 'the key constructor holding prototype is not allowed';
  }
  return undefined;
}

/** Everything inside a JSON value that could not be stored, with the path to it. */
function jsonIssues(value: unknown, path: PropertyKey[], depth: number, out: Issue[]) {
  if (out.length >= MAX_ISSUES) return;
  if (typeof value === 'string') {
    const reason = unstorableReason(value);
    if (reason) out.push({ path, message: reason });
    else if (value.length > LIMITS.jsonString) out.push({ path, message: `must be at most ${LIMITS.jsonString} characters` });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (depth > LIMITS.jsonDepth) {
    out.push({ path, message: `is nested more than ${LIMITS.jsonDepth} levels deep` });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => jsonIssues(v, [...path, i], depth + 1, out));
    return;
  }
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    const bad = dangerousKey(key, v) ?? (unstorableReason(key) && `key ${unstorableReason(key)}`);
    if (bad) out.push({ path: [...path, key], message: bad });
    else if (key.length > LIMITS.jsonKey) out.push({ path: [...path, key], message: `key must be at most ${LIMITS.jsonKey} characters` });
    else jsonIssues(v, [...path, key], depth + 1, out);
    if (out.length >= MAX_ISSUES) return;
  }
}

/**
 * A free-form JSON object stored as jsonb: at most `maxKeys` keys at its top, keys of 1 to 100 characters, string
 * values of at most 10,000 characters, 8 levels deep, no NUL, no unpaired surrogate and no `__proto__` key anywhere.
 * The walk runs on the input as sent: zod's record would otherwise drop a top-level `__proto__` without a word.
 */
export function jsonObject(opts: { maxKeys: number; label: string }) {
  const record = z
    .record(z.string().min(1, 'keys must not be empty').max(LIMITS.jsonKey), z.unknown())
    .refine((o) => Object.keys(o).length <= opts.maxKeys, `${opts.label} may hold at most ${opts.maxKeys} keys`);
  return z.preprocess((input, ctx) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
    const issues: Issue[] = [];
    jsonIssues(input, [], 1, issues);
    for (const i of issues) ctx.addIssue({ code: 'custom', path: i.path, message: i.message, input });
    return input;
  }, record);
}

/** A time in an output (API views, event payloads): what `Date#toISOString` writes. */
export const IsoDateTime = z.iso.datetime().meta({ description: 'ISO 8601 UTC with milliseconds.' });
