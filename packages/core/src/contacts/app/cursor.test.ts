import { qb } from '@leadwire/db';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, keysetPredicate, sortKeys } from './cursor.ts';

describe('keyset cursors', () => {
  const keys = sortKeys('createdAt', 'desc');
  const at = '2026-11-22T10:00:00.123456Z';
  const id = '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10';

  it('round-trips the key values of the sort they were made for', () => {
    const cursor = encodeCursor('createdAt', 'desc', [at, id]);
    expect(decodeCursor(cursor, 'createdAt', 'desc', keys)).toEqual([at, id]);
  });

  it('refuses a cursor of another sort or direction, garbage, and values Postgres would reject', () => {
    expect(decodeCursor(encodeCursor('createdAt', 'asc', [at, id]), 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor(encodeCursor('updatedAt', 'desc', [at, id]), 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor('not-a-cursor', 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor(encodeCursor('createdAt', 'desc', [at]), 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor(encodeCursor('createdAt', 'desc', ['2026-02-30T10:00:00.000000Z', id]), 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor(encodeCursor('createdAt', 'desc', [`${at}'; drop table contacts; --`, id]), 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor(encodeCursor('createdAt', 'desc', [at, 'nope']), 'createdAt', 'desc', keys)).toBeNull();
    const score = sortKeys('leadScore', 'asc');
    expect(decodeCursor(encodeCursor('leadScore', 'asc', ['99999999999', id]), 'leadScore', 'asc', score)).toBeNull();
    expect(decodeCursor(encodeCursor('leadScore', 'asc', ['42', id]), 'leadScore', 'asc', score)).toEqual(['42', id]);
    const name = sortKeys('lastName', 'asc');
    expect(decodeCursor(encodeCursor('lastName', 'asc', ['false', 'a\u0000', '', id]), 'lastName', 'asc', name)).toBeNull();
  });

  it('compares strictly after the last row, key by key, each key in its own direction', () => {
    const p = qb
      .selectFrom('contacts as c')
      .select('c.id')
      .where(keysetPredicate(sortKeys('lastName', 'desc'), ['false', 'lovelace', 'ada', id]))
      .compile();
    expect(p.sql).toBe(
      'select "c"."id" from "contacts" as "c" where ' +
        '(("c"."last_name" is null) > $1::boolean or (("c"."last_name" is null) = $2::boolean and (coalesce(lower("c"."last_name"), \'\') < $3::text or ' +
        '(coalesce(lower("c"."last_name"), \'\') = $4::text and (coalesce(lower("c"."first_name"), \'\') < $5::text or ' +
        '(coalesce(lower("c"."first_name"), \'\') = $6::text and "c"."id" < $7::uuid))))))',
    );
    expect(p.parameters).toEqual(['false', 'false', 'lovelace', 'lovelace', 'ada', 'ada', id]);
  });
});
