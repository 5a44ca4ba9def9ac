import { qb } from '@leadwire/db';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, keysetPredicate, sortKeys } from './cursor.ts';

describe('keyset cursors', () => {
  const keys = sortKeys('createdAt', 'desc');
  const at = '2026-11-22T10:00:00.123456Z';
  const id = '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10';

  it('round-trips the key values of the sort they were made for', () => {
    const cursor = encodeCursor('contacts', 'createdAt', 'desc', [at, id]);
    expect(decodeCursor(cursor, 'contacts', 'createdAt', 'desc', keys)).toEqual([at, id]);
  });

  it('refuses a cursor of another sort or direction, garbage, and values Postgres would reject', () => {
    expect(decodeCursor(encodeCursor('contacts', 'createdAt', 'asc', [at, id]), 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor(encodeCursor('contacts', 'updatedAt', 'desc', [at, id]), 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor('not-a-cursor', 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor(encodeCursor('contacts', 'createdAt', 'desc', [at]), 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    expect(
      decodeCursor(
        encodeCursor('contacts', 'createdAt', 'desc', ['2026-02-30T10:00:00.000000Z', id]),
        'contacts',
        'createdAt',
        'desc',
        keys,
      ),
    ).toBeNull();
    expect(
      decodeCursor(
        encodeCursor('contacts', 'createdAt', 'desc', [`${at}'; drop table contacts; --`, id]),
        'contacts',
        'createdAt',
        'desc',
        keys,
      ),
    ).toBeNull();
    expect(decodeCursor(encodeCursor('contacts', 'createdAt', 'desc', [at, 'nope']), 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    const score = sortKeys('leadScore', 'asc');
    expect(
      decodeCursor(encodeCursor('contacts', 'leadScore', 'asc', ['99999999999', id]), 'contacts', 'leadScore', 'asc', score),
    ).toBeNull();
    expect(decodeCursor(encodeCursor('contacts', 'leadScore', 'asc', ['42', id]), 'contacts', 'leadScore', 'asc', score)).toEqual([
      '42',
      id,
    ]);
    // Year 0 (PostgreSQL has none), another list's cursor, version 1 cursors, a re-encoded or truncated one.
    expect(
      decodeCursor(
        encodeCursor('contacts', 'createdAt', 'desc', ['0000-01-01T00:00:00.000000Z', id]),
        'contacts',
        'createdAt',
        'desc',
        keys,
      ),
    ).toBeNull();
    expect(decodeCursor(encodeCursor('timeline', 'createdAt', 'desc', [at, id]), 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor(encodeCursor('trash', 'createdAt', 'desc', [at, id]), 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    const v1 = Buffer.from(JSON.stringify([1, 'createdAt', 'desc', [at, id]])).toString('base64url');
    expect(decodeCursor(v1, 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    const made = encodeCursor('contacts', 'createdAt', 'desc', [at, id]);
    expect(decodeCursor(`${made}=`, 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    expect(decodeCursor(made.slice(0, -3), 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    const spaced = Buffer.from(JSON.stringify([2, 'contacts', 'createdAt', 'desc', [at, id]], null, 1)).toString('base64url');
    expect(decodeCursor(spaced, 'contacts', 'createdAt', 'desc', keys)).toBeNull();
    const name = sortKeys('lastName', 'asc');
    expect(
      decodeCursor(encodeCursor('contacts', 'lastName', 'asc', ['false', 'a\u0000', '', id]), 'contacts', 'lastName', 'asc', name),
    ).toBeNull();
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
