import { describe, expect, it } from 'vitest';
import { checkFilter, DeliveryFilterSchema, FILTER_LIMITS, matchesFilter } from './filter.ts';

const contact = { id: 'c1', email: 'ada@example.com', leadScore: 40, tags: ['vip', 'beta'], phone: null, custom: { plan: 'pro' } };
const data = { contact };
const passes = (f: Record<string, unknown>) => {
  expect(checkFilter(f)).toEqual([]);
  return matchesFilter(f, data);
};

describe('delivery filters: matching', () => {
  it('equality, strict: a shorthand value and $eq; "40" is not 40; null only matches a present null', () => {
    expect(passes({ 'contact.email': 'ada@example.com' })).toBe(true);
    expect(passes({ 'contact.email': { $eq: 'grace@example.com' } })).toBe(false);
    expect(passes({ 'contact.leadScore': '40' })).toBe(false);
    expect(passes({ 'contact.phone': null })).toBe(true);
    expect(passes({ 'contact.title': null })).toBe(false);
    expect(passes({ 'contact.custom.plan': 'pro' })).toBe(true);
  });

  it('$neq and $nin hold on a missing path; $eq and $in do not', () => {
    expect(passes({ 'contact.title': { $neq: 'CTO' } })).toBe(true);
    expect(passes({ 'contact.title': { $nin: ['CTO'] } })).toBe(true);
    expect(passes({ 'contact.title': { $in: ['CTO'] } })).toBe(false);
    expect(passes({ 'contact.email': { $neq: 'ada@example.com' } })).toBe(false);
  });

  it('arrays: $eq and $in hold when an element matches, $neq and $nin when none does; a number indexes', () => {
    expect(passes({ 'contact.tags': 'vip' })).toBe(true);
    expect(passes({ 'contact.tags': { $in: ['gold', 'beta'] } })).toBe(true);
    expect(passes({ 'contact.tags': { $neq: 'vip' } })).toBe(false);
    expect(passes({ 'contact.tags': { $nin: ['gold'] } })).toBe(true);
    expect(passes({ 'contact.tags.1': 'beta' })).toBe(true);
    expect(passes({ 'contact.tags.2': { $exists: true } })).toBe(false);
  });

  it('numeric comparison holds only on numbers; several operators on one path all hold', () => {
    expect(passes({ 'contact.leadScore': { $gte: 40, $lt: 50 } })).toBe(true);
    expect(passes({ 'contact.leadScore': { $gt: 40 } })).toBe(false);
    expect(passes({ 'contact.leadScore': { $lte: 40 } })).toBe(true);
    expect(passes({ 'contact.email': { $gt: 0 } })).toBe(false);
  });

  it('$exists tells present (null included) from absent; a path never walks into inherited keys', () => {
    expect(passes({ 'contact.phone': { $exists: true } })).toBe(true);
    expect(passes({ 'contact.title': { $exists: false } })).toBe(true);
    expect(passes({ 'contact.email.length': { $exists: true } })).toBe(false);
    expect(passes({ 'contact.constructor': { $exists: true } })).toBe(false);
  });

  it('keys of one object all hold; $and and $or combine; {} holds for every event', () => {
    expect(passes({})).toBe(true);
    expect(passes({ 'contact.tags': 'vip', 'contact.leadScore': { $gte: 50 } })).toBe(false);
    expect(passes({ $or: [{ 'contact.leadScore': { $gte: 50 } }, { 'contact.custom.plan': { $in: ['pro', 'max'] } }] })).toBe(true);
    expect(passes({ $and: [{ 'contact.tags': 'vip' }, { $or: [{ 'contact.email': 'x' }, { 'contact.id': 'c1' }] }] })).toBe(true);
    expect(passes({ $and: [{ 'contact.tags': 'vip' }, { 'contact.id': 'c2' }] })).toBe(false);
  });
});

describe('delivery filters: checked when saved, naming the bad part', () => {
  const problems = (f: unknown) => checkFilter(f);

  it('names the operand, operator or path that is wrong, where it is', () => {
    expect(problems({ $or: [{ 'contact.email': 'a' }, { 'contact.leadScore': { $gt: '5' } }] })).toEqual([
      '$or[1]["contact.leadScore"].$gt needs a number (got "5")',
    ]);
    expect(problems({ 'contact.email': { $like: 'a%' } })).toEqual([
      '"contact.email".$like: unknown operator; use one of $eq, $neq, $in, $nin, $gt, $gte, $lt, $lte, $exists',
    ]);
    expect(problems({ $not: [] })[0]).toBe('$not: unknown operator; use $and or $or here, or a path of data such as contact.email');
    expect(problems({ 'contact..email': 1 })[0]).toMatch(/^"contact\.\.email": a path is keys of data joined by single dots/);
    expect(problems({ 'contact.tags': { $in: [] } })[0]).toMatch(/^"contact\.tags"\.\$in needs an array of 1 to 50/);
    expect(problems({ 'contact.tags': { $in: ['a', { b: 1 }] } })).toEqual([
      '"contact.tags".$in[1] must be a string, number, boolean or null (got {"b":1})',
    ]);
    expect(problems({ 'contact.x': { $exists: 'yes' } })).toEqual(['"contact.x".$exists needs true or false (got "yes")']);
    expect(problems({ 'contact.x': [1] })).toEqual(['"contact.x" needs a string, number, boolean or null (got [1])']);
    expect(problems({ 'contact.x': {} })[0]).toMatch(/^"contact\.x" needs at least one operator/);
    expect(problems({ $and: {} })).toEqual(['$and needs an array of at least one filter object (got {})']);
    expect(problems({ $and: [1] })[0]).toMatch(/^\$and\[0\] must be a JSON object/);
    expect(problems('x')[0]).toMatch(/^the filter must be a JSON object/);
    expect(problems({ 'contact.x': 'a\u0000b' })).toEqual(['"contact.x" must not contain the NUL character (\\u0000)']);
  });

  it('bounds size: conditions, nesting, keys of a path', () => {
    const many = Object.fromEntries(Array.from({ length: FILTER_LIMITS.conditions + 1 }, (_, i) => [`k${i}`, i]));
    expect(problems(many)).toEqual([`the filter has ${FILTER_LIMITS.conditions + 1} conditions; at most ${FILTER_LIMITS.conditions}`]);
    let deep: Record<string, unknown> = { a: 1 };
    for (let i = 0; i < FILTER_LIMITS.depth + 1; i++) deep = { $and: [deep] };
    expect(problems(deep)[0]).toMatch(/\$and: \$and and \$or nest at most 4 deep$/);
    expect(problems({ 'a.b.c.d.e.f.g.h.i': 1 })[0]).toMatch(/a path has at most 8 keys/);
  });

  it('as an input schema: the 400 message carries the problem', () => {
    const r = DeliveryFilterSchema.safeParse({ 'contact.leadScore': { $gte: 'high' } });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toBe('"contact.leadScore".$gte needs a number (got "high")');
    expect(DeliveryFilterSchema.safeParse({ 'contact.leadScore': { $gte: 50 } }).success).toBe(true);
  });
});
