import { describe, expect, it } from 'vitest';
import { applyPatch, changeEvents, newAppContact, withoutTags } from './apply.ts';
import { unionTags } from '../shared/apply.ts';
import { mergeFields } from './merge-fields.ts';
import type { AppContactRow } from './row.ts';

const ORG = '00000000-0000-4000-8000-000000000001';
const now = new Date('2026-11-22T10:00:00.000Z');
const later = new Date('2026-11-22T11:00:00.000Z');

const contact = (over: Partial<AppContactRow> = {}): AppContactRow => ({
  ...newAppContact(ORG, over.id ?? '00000000-0000-4000-8000-00000000000a', { firstName: 'Ada' }, now),
  ...over,
});

describe('app contact writes', () => {
  it('keeps omitted fields, clears nulls, and recomputes the score from what is stored', () => {
    const c = contact({ phone: '+1 555', job_title: 'CTO' });
    const next = applyPatch(c, { email: 'ada@example.com', phone: null }, later);
    expect(next).toMatchObject({ email: 'ada@example.com', phone: null, job_title: 'CTO', first_name: 'Ada', updated_at: later });
    // email +15, job title +10, source manual +0
    expect(next.lead_score).toBe(25);
    expect(applyPatch(next, {}, later).lead_score).toBe(25);
    expect(applyPatch({ ...next, score_override: 80 }, {}, later).lead_score).toBe(80);
  });

  it('adds tags case-insensitively keeping the stored spelling, and removes them the same way', () => {
    expect(unionTags(['VIP'], ['vip', 'new', 'New'])).toEqual(['VIP', 'new']);
    expect(withoutTags(['VIP', 'new'], ['vip'])).toEqual(['new']);
  });

  it('emits nothing for a change that changes nothing', () => {
    const c = contact();
    expect(changeEvents(c, { ...c, updated_at: later }, later)).toEqual([]);
  });

  it('emits contact.updated, then the specific events with what the value was before', () => {
    const c = contact({ tags: ['a'] });
    const next = { ...c, stage: 'customer', tags: ['a', 'b', 'c'], email: 'x@example.com', lead_score: 15 };
    const events = changeEvents(c, next, later, { tagEvents: true });
    expect(events.map((e) => [e.event, e.source])).toEqual([
      ['contact.updated', 'app'],
      ['contact.stage_changed', 'app'],
      ['contact.tag_added', 'app'],
      ['contact.tag_added', 'app'],
      ['contact.score_changed', 'app'],
    ]);
    expect(events[1]!.data).toMatchObject({ previousStage: 'lead', contact: { id: c.id, stage: 'customer' } });
    expect(events.slice(2, 4).map((e) => e.data.tag)).toEqual(['b', 'c']);
    expect(events[4]!.data).toMatchObject({ previousScore: 0, contact: { leadScore: 15 } });
    expect(changeEvents(c, next, later).map((e) => e.event)).not.toContain('contact.tag_added');
  });
});

describe('merge fields', () => {
  it('keeps every value of the primary and fills only its blanks, from the duplicates in order', () => {
    const primary = contact({ first_name: 'Ada', last_name: null, job_title: null, tags: ['vip'], custom: { a: 1 } });
    const d1 = contact({
      id: 'd1',
      first_name: 'Augusta',
      last_name: 'Lovelace',
      job_title: null,
      tags: ['VIP', 'x'],
      custom: { a: 2, b: 1 },
    });
    const d2 = contact({ id: 'd2', first_name: 'Other', last_name: 'King', job_title: 'Countess', tags: ['y'], custom: { b: 2, c: 3 } });
    const merged = mergeFields(primary, [d1, d2], later);
    expect(merged).toMatchObject({
      id: primary.id,
      first_name: 'Ada',
      last_name: 'Lovelace',
      job_title: 'Countess',
      tags: ['vip', 'x', 'y'],
      custom: { a: 1, b: 1, c: 3 },
      stage: primary.stage,
      source: primary.source,
      created_at: primary.created_at,
    });
    expect(merged.lead_score).toBe(10);
  });

  it('moves consent with the channel it belongs to', () => {
    const primary = contact({ email: 'p@example.com', email_consent: false, phone: null, sms_consent: false });
    const d = contact({ id: 'd', email: 'd@example.com', email_consent: true, phone: '+1 555', sms_consent: true });
    expect(mergeFields(primary, [d], later)).toMatchObject({
      email: 'p@example.com',
      email_consent: false,
      phone: '+1 555',
      sms_consent: true,
    });
  });
});
