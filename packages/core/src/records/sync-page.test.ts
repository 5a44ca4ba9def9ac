import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeSyncCursor, encodeSyncCursor, startOf, SyncPageFields } from './sync-page.ts';

const ID = '3f2c6a0e-8b1d-4c47-9d2a-5e7f1b3c9a10';
const NIL = '00000000-0000-0000-0000-000000000000';
const since = (s: string) => z.object(SyncPageFields).parse({ updatedSince: s }).updatedSince;

describe('the sync lists’ start', () => {
  it('reads updatedSince to the microsecond, in UTC, whatever its offset', () => {
    expect(since('2026-05-01T10:00:00Z')).toBe('2026-05-01T10:00:00.000000Z');
    expect(since('2026-05-01T10:00:00.000001Z')).toBe('2026-05-01T10:00:00.000001Z');
    expect(since('2026-05-01T12:00:00.123456789+02:00')).toBe('2026-05-01T10:00:00.123456Z');
    expect(since('2026-05-01T00:30:00.5-01:00')).toBe('2026-05-01T01:30:00.500000Z');
  });

  it('starts at the later of the cursor and updatedSince', () => {
    const cursor = encodeSyncCursor('contacts', '2026-05-01T10:00:00.000001Z', ID);
    expect(startOf({ limit: 1 }, 'contacts')).toEqual({ afterTs: '-infinity', afterId: NIL });
    expect(startOf({ limit: 1, cursor }, 'contacts')).toEqual({ afterTs: '2026-05-01T10:00:00.000001Z', afterId: ID });
    expect(startOf({ limit: 1, cursor, updatedSince: '2026-05-01T10:00:00.000000Z' }, 'contacts')).toEqual({
      afterTs: '2026-05-01T10:00:00.000001Z',
      afterId: ID,
    });
    expect(startOf({ limit: 1, cursor, updatedSince: '2026-05-01T10:00:00.000002Z' }, 'contacts')).toEqual({
      afterTs: '2026-05-01T10:00:00.000002Z',
      afterId: NIL,
    });
  });

  it('takes back only the cursors its own list made, whole, in range and spelt as it spells them', () => {
    const made = encodeSyncCursor('contacts', '2026-05-01T10:00:00.000001Z', ID);
    expect(decodeSyncCursor(made, 'contacts')).toEqual({ position: '2026-05-01T10:00:00.000001Z', id: ID });
    const forged = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const bad of [
      '',
      '%%%',
      // Another list's cursor, and the s1 cursors that named no list.
      encodeSyncCursor('companies', '2026-05-01T10:00:00.000001Z', ID),
      forged(['s1', '2026-05-01T10:00:00.000001Z', ID]),
      // Out of range: no year 0 in PostgreSQL (the 500 of issue 28), no February 29th in 2026.
      forged(['s2', 'contacts', '0000-01-01T00:00:00.000000Z', NIL]),
      forged(['s2', 'contacts', '2026-02-29T00:00:00.000000Z', ID]),
      forged(['s2', 'contacts', '2026-05-01T10:00:00Z', ID]),
      forged(['s2', 'contacts', 1, ID]),
      forged(['s2', 'contacts', '2026-05-01T10:00:00.000001Z', ID.toUpperCase()]),
      // Re-encoded: padded, standard base64, JSON with spaces; truncated.
      `${made}==`,
      Buffer.from(JSON.stringify(['s2', 'contacts', '2026-05-01T10:00:00.000001Z', ID])).toString('base64'),
      Buffer.from(JSON.stringify(['s2', 'contacts', '2026-05-01T10:00:00.000001Z', ID], null, 1)).toString('base64url'),
      made.slice(0, -4),
    ]) {
      expect(decodeSyncCursor(bad, 'contacts'), bad).toBeNull();
    }
    expect(() => startOf({ limit: 1, cursor: 'nope' }, 'contacts')).toThrow(expect.objectContaining({ code: 'invalid_cursor' }));
  });
});
