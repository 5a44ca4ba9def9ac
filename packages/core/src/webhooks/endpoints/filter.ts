import { z } from 'zod';
import { unstorableReason } from '../../validation/index.ts';

/**
 * Delivery filters (issue 30): which events an endpoint receives, by the content of their `data`, besides their names.
 * Modelled on Convoy's subscription filters; written as JSON, checked when saved, applied when an event is dispatched.
 *
 *   filter   := { clause, ... }                  every clause holds (an implicit and); {} holds for every event
 *   clause   := "$and": [filter, ...]            every filter holds
 *             | "$or":  [filter, ...]            at least one holds
 *             | path: scalar                     shorthand for path: { "$eq": scalar }
 *             | path: { op: operand, ... }       every operator holds
 *   op       := "$eq" | "$neq"                   a scalar (string, number, boolean or null)
 *             | "$in" | "$nin"                   an array of 1-50 scalars
 *             | "$gt" | "$gte" | "$lt" | "$lte"  a number
 *             | "$exists"                        true or false
 *   path     := keys of `data` joined by dots, e.g. contact.email; a number indexes an array (contact.tags.0)
 *
 * Comparison is strict (no conversion): "5" is not 5, and a number comparison on anything but a number is false. On an
 * array value (contact.tags), `$eq` and `$in` hold when an element matches, `$neq` and `$nin` when none does. A missing
 * path: `$exists: false`, `$neq` and `$nin` hold; the rest do not (null matches only a present null).
 */

export const FILTER_LIMITS = {
  /** Conditions (operators, shorthand equalities included) in the whole filter. */
  conditions: 20,
  /** Nesting of $and/$or. */
  depth: 4,
  /** Scalars in one $in/$nin. */
  inItems: 50,
  /** Keys in a path. */
  segments: 8,
  /** Characters of one key of a path, and of a string operand. */
  segment: 100,
  string: 500,
} as const;

const SCALAR_OPS = ['$eq', '$neq'] as const;
const LIST_OPS = ['$in', '$nin'] as const;
const NUMBER_OPS = ['$gt', '$gte', '$lt', '$lte'] as const;
const OPS = [...SCALAR_OPS, ...LIST_OPS, ...NUMBER_OPS, '$exists'] as const;
type Op = (typeof OPS)[number];

type Scalar = string | number | boolean | null;
/** A filter as stored: JSON that `checkFilter` accepted. */
export type DeliveryFilter = { [key: string]: unknown };

const isScalar = (v: unknown): v is Scalar =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
};
/** Where a problem is, as a reader finds it in the JSON they wrote: $or[1]["contact.score"].$gt */
const at = (where: string, key: string | number) =>
  typeof key === 'number'
    ? `${where}[${key}]`
    : /^\$[a-z]+$/.test(key)
      ? `${where}${where ? '.' : ''}${key}`
      : where
        ? `${where}[${JSON.stringify(key)}]`
        : JSON.stringify(key);

/**
 * Every problem of a filter, each naming the part it is about (`$or[1]["contact.score"].$gt needs a number`); empty when
 * the filter is valid.
 */
export function checkFilter(input: unknown): string[] {
  const problems: string[] = [];
  let conditions = 0;
  const stringProblem = (where: string, s: string, max: number) => {
    const bad = unstorableReason(s);
    if (bad) problems.push(`${where} ${bad}`);
    else if (s.length > max) problems.push(`${where} must be at most ${max} characters`);
  };
  const checkPath = (where: string, path: string) => {
    if (path.startsWith('$'))
      return problems.push(`${where}: unknown operator; use $and or $or here, or a path of data such as contact.email`);
    const segments = path.split('.');
    if (segments.some((s) => s === '')) return problems.push(`${where}: a path is keys of data joined by single dots, e.g. contact.email`);
    if (segments.length > FILTER_LIMITS.segments) return problems.push(`${where}: a path has at most ${FILTER_LIMITS.segments} keys`);
    for (const s of segments) stringProblem(`${where}: the key ${show(s)}`, s, FILTER_LIMITS.segment);
  };
  const checkOperand = (where: string, op: Op, v: unknown) => {
    conditions++;
    if ((SCALAR_OPS as readonly string[]).includes(op)) {
      if (!isScalar(v)) problems.push(`${where} needs a string, number, boolean or null (got ${show(v)})`);
      else if (typeof v === 'string') stringProblem(where, v, FILTER_LIMITS.string);
    } else if ((LIST_OPS as readonly string[]).includes(op)) {
      if (!Array.isArray(v) || v.length === 0 || v.length > FILTER_LIMITS.inItems)
        problems.push(`${where} needs an array of 1 to ${FILTER_LIMITS.inItems} strings, numbers, booleans or nulls (got ${show(v)})`);
      else
        v.forEach((item, i) => {
          if (!isScalar(item)) problems.push(`${at(where, i)} must be a string, number, boolean or null (got ${show(item)})`);
          else if (typeof item === 'string') stringProblem(at(where, i), item, FILTER_LIMITS.string);
        });
    } else if ((NUMBER_OPS as readonly string[]).includes(op)) {
      if (typeof v !== 'number' || !Number.isFinite(v)) problems.push(`${where} needs a number (got ${show(v)})`);
    } else if (typeof v !== 'boolean') problems.push(`${where} needs true or false (got ${show(v)})`);
  };
  const checkFilterAt = (where: string, f: unknown, depth: number) => {
    if (!isObject(f)) return problems.push(`${where || 'the filter'} must be a JSON object such as {"contact.email": "ada@example.com"}`);
    for (const [key, value] of Object.entries(f)) {
      const here = at(where, key);
      if (key === '$and' || key === '$or') {
        if (depth >= FILTER_LIMITS.depth) {
          problems.push(`${here}: $and and $or nest at most ${FILTER_LIMITS.depth} deep`);
          continue;
        }
        if (!Array.isArray(value) || value.length === 0) {
          problems.push(`${here} needs an array of at least one filter object (got ${show(value)})`);
          continue;
        }
        value.forEach((sub, i) => checkFilterAt(at(here, i), sub, depth + 1));
        continue;
      }
      const before = problems.length;
      checkPath(here, key);
      if (problems.length > before) continue;
      if (!isObject(value)) {
        checkOperand(here, '$eq', value);
        continue;
      }
      const ops = Object.entries(value);
      if (ops.length === 0) problems.push(`${here} needs at least one operator: ${OPS.join(', ')}`);
      for (const [op, operand] of ops) {
        if (!(OPS as readonly string[]).includes(op)) problems.push(`${at(here, op)}: unknown operator; use one of ${OPS.join(', ')}`);
        else checkOperand(at(here, op), op as Op, operand);
      }
    }
  };
  checkFilterAt('', input, 0);
  if (conditions > FILTER_LIMITS.conditions) problems.push(`the filter has ${conditions} conditions; at most ${FILTER_LIMITS.conditions}`);
  return problems;
}

const DESCRIPTION = [
  'Only events whose `data` matches are delivered (besides `events`); null delivers every subscribed event. A JSON object whose keys all hold: a path of `data` (keys joined by dots, a number indexes an array) mapped to a value (equality) or to operators, or `$and`/`$or` mapped to an array of such objects.',
  'Operators: `$eq`, `$neq` (a string, number, boolean or null), `$in`, `$nin` (an array of 1-50 of them), `$gt`, `$gte`, `$lt`, `$lte` (a number), `$exists` (true or false).',
  'Comparison is strict ("5" is not 5). On an array value, `$eq`/`$in` hold when an element matches, `$neq`/`$nin` when none does.',
  `At most ${FILTER_LIMITS.conditions} conditions and ${FILTER_LIMITS.depth} levels of $and/$or (docs/webhooks.md, "Filtering deliveries").`,
].join(' ');

/**
 * The filter as an input field. Its JSON Schema stays an open object (the grammar is recursive and keyed by the paths
 * a reader chooses); the check is `checkFilter`, whose first problems become the 400's message.
 */
export const DeliveryFilterSchema = z
  .record(z.string(), z.unknown())
  .superRefine((f, ctx) => {
    for (const message of checkFilter(f).slice(0, 5)) ctx.addIssue({ code: 'custom', message });
  })
  .meta({
    description: DESCRIPTION,
    example: { 'contact.tags': 'vip', $or: [{ 'contact.leadScore': { $gte: 50 } }, { 'contact.source': { $in: ['form', 'booking'] } }] },
  });

/** The value a path leads to in `data`, or undefined when it leads nowhere. */
function resolve(data: unknown, path: string): unknown {
  let v: unknown = data;
  for (const key of path.split('.')) {
    if (Array.isArray(v) && /^\d+$/.test(key)) v = v[Number(key)];
    else if (isObject(v) && Object.hasOwn(v, key)) v = v[key];
    else return undefined;
  }
  return v;
}

const anyOf = (v: unknown, test: (x: unknown) => boolean) => (Array.isArray(v) ? v.some(test) : test(v));

function holds(op: string, operand: unknown, v: unknown): boolean {
  switch (op) {
    case '$eq':
      return v !== undefined && anyOf(v, (x) => x === operand);
    case '$neq':
      return !anyOf(v, (x) => x === operand);
    case '$in':
      return v !== undefined && anyOf(v, (x) => (operand as unknown[]).includes(x));
    case '$nin':
      return !anyOf(v, (x) => (operand as unknown[]).includes(x));
    case '$gt':
      return typeof v === 'number' && v > (operand as number);
    case '$gte':
      return typeof v === 'number' && v >= (operand as number);
    case '$lt':
      return typeof v === 'number' && v < (operand as number);
    case '$lte':
      return typeof v === 'number' && v <= (operand as number);
    case '$exists':
      return (v !== undefined) === operand;
    default:
      return false;
  }
}

/** Whether `data` passes the filter (one `checkFilter` accepted); an operator it does not know never holds. */
export function matchesFilter(filter: DeliveryFilter, data: unknown): boolean {
  return Object.entries(filter).every(([key, value]) => {
    if (key === '$and') return (value as DeliveryFilter[]).every((f) => matchesFilter(f, data));
    if (key === '$or') return (value as DeliveryFilter[]).some((f) => matchesFilter(f, data));
    const v = resolve(data, key);
    if (!isObject(value)) return holds('$eq', value, v);
    return Object.entries(value).every(([op, operand]) => holds(op, operand, v));
  });
}
