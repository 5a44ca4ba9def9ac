import { describe, expect, it } from 'vitest';
import { applyRow, newContact, type ResolvedRow, scoreInputsChanged } from './apply.ts';

const now = new Date('2026-01-01T00:00:00.000Z');
const row = (input: ResolvedRow['input'], extra: Partial<ResolvedRow> = {}): ResolvedRow => ({
  input,
  companyId: undefined,
  source: 'api',
  ...extra,
});

describe('newContact', () => {
  it('takes the row, its source and a computed score', () => {
    const c = newContact(
      'org',
      'id',
      row({ email: 'a@b.com', phone: '1', tags: ['x', 'X'] }, { source: 'referral', companyId: 'co' }),
      now,
    );
    expect(c).toMatchObject({
      email: 'a@b.com',
      phone: '1',
      tags: ['x'],
      source: 'referral',
      company_id: 'co',
      lead_score: 15 + 10 + 15 + 15,
    });
  });
});

describe('applyRow', () => {
  const base = newContact(
    'org',
    'id',
    row({ email: 'a@b.com', firstName: 'A', phone: '1', tags: ['one'], custom: { k: 1 } }, { companyId: 'co' }),
    now,
  );

  it('keeps omitted fields, clears nulls, overwrites sent ones', () => {
    const c = applyRow(base, row({ firstName: 'B', phone: null }), now);
    expect(c).toMatchObject({ first_name: 'B', phone: null, company_id: 'co', email: 'a@b.com' });
  });

  it('never replaces an email and never changes the source', () => {
    const c = applyRow(base, row({ email: 'other@b.com' }, { source: 'form' }), now);
    expect(c.email).toBe('a@b.com');
    expect(c.source).toBe('api');
  });

  it('only adds tags, case-insensitively deduplicated, keeping the first spelling', () => {
    expect(applyRow(base, row({ tags: ['ONE', 'two'] }), now).tags).toEqual(['one', 'two']);
    expect(applyRow(base, row({ tags: [] }), now).tags).toEqual(['one']);
  });

  it('merges custom key by key; null removes a key', () => {
    expect(applyRow(base, row({ custom: { k: null, n: { deep: true } } }), now).custom).toEqual({ n: { deep: true } });
  });

  it('recomputes the score and applies a given override', () => {
    expect(applyRow(base, row({ title: 'CEO' }), now).lead_score).toBe(15 + 10 + 15 + 10);
    expect(applyRow(base, row({}, { scoreOverride: 3 }), now).lead_score).toBe(3);
    expect(applyRow(base, row({}, { companyId: null }), now).lead_score).toBe(25);
  });

  it('reports whether score inputs changed', () => {
    expect(scoreInputsChanged(base, applyRow(base, row({ tags: ['z'] }), now))).toBe(false);
    expect(scoreInputsChanged(base, applyRow(base, row({ title: 'x' }), now))).toBe(true);
  });
});
