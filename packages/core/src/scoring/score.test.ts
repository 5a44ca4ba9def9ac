import { describe, expect, it } from 'vitest';
import { MAX_ADJUSTMENT, SCORE_FIELDS, baseScore, clampAdjustment, finalScore } from './score.ts';
import type { ScoreInputs } from './score.ts';

const everything: ScoreInputs = {
  email: 'ada@example.com',
  phone: '+33 6 12 34 56 78',
  hasCompany: true,
  jobTitle: 'CTO',
  website: 'https://example.com',
  linkedin: 'https://linkedin.com/in/ada',
  source: 'booking',
  hasBooking: true,
};

describe('baseScore', () => {
  it('scores a contact with no data at all as 0', () => {
    expect(baseScore({})).toBe(0);
  });

  it('scores nulls, false flags and unknown source as 0', () => {
    expect(
      baseScore({
        email: null,
        phone: null,
        hasCompany: false,
        jobTitle: null,
        website: null,
        linkedin: null,
        source: null,
        hasBooking: false,
      }),
    ).toBe(0);
  });

  it.each<[string, ScoreInputs, number]>([
    ['email', { email: 'ada@example.com' }, 15],
    ['phone', { phone: '+33612345678' }, 10],
    ['company', { hasCompany: true }, 15],
    ['job title', { jobTitle: 'Head of Sales' }, 10],
    ['website', { website: 'https://example.com' }, 5],
    ['linkedin', { linkedin: 'https://linkedin.com/in/ada' }, 5],
    ['source booking', { source: 'booking' }, 20],
    ['hasBooking', { hasBooking: true }, 20],
    ['source referral', { source: 'referral' }, 15],
    ['source form', { source: 'form' }, 10],
    ['source manual', { source: 'manual' }, 0],
  ])('%s alone', (_name, inputs, expected) => {
    expect(baseScore(inputs)).toBe(expected);
  });

  it('adds everything up to 75', () => {
    expect(baseScore(everything)).toBe(15 + 10 + 15 + 10 + 5 + 20);
    expect(baseScore(everything)).toBe(75);
  });

  it('counts website and linkedin together only once (+5)', () => {
    expect(baseScore({ website: 'https://example.com', linkedin: 'https://linkedin.com/in/ada' })).toBe(5);
  });

  it('counts the booking bonus once when both source and hasBooking say booking', () => {
    expect(baseScore({ source: 'booking', hasBooking: true })).toBe(20);
  });

  it('gives a single source bonus: the booking bonus wins over the declared source', () => {
    expect(baseScore({ source: 'referral', hasBooking: true })).toBe(20);
    expect(baseScore({ source: 'form', hasBooking: true })).toBe(20);
    expect(baseScore({ source: 'manual', hasBooking: true })).toBe(20);
  });

  it.each(['', ' ', '   ', '\t\n'])('ignores blank string %j in every text field', (blank) => {
    expect(baseScore({ email: blank, phone: blank, jobTitle: blank, website: blank, linkedin: blank, source: blank })).toBe(0);
  });

  it('counts a value with surrounding whitespace', () => {
    expect(baseScore({ email: '  ada@example.com  ' })).toBe(15);
  });

  it('matches sources case- and whitespace-insensitively', () => {
    expect(baseScore({ source: ' Referral ' })).toBe(15);
    expect(baseScore({ source: 'FORM' })).toBe(10);
  });

  it.each(['api', 'import', 'webinar', 'constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    'gives no bonus for unknown source %j',
    (source) => {
      expect(baseScore({ source })).toBe(0);
    },
  );

  it('always returns an integer within 0..100', () => {
    const score = baseScore(everything);
    expect(Number.isInteger(score)).toBe(true);
    expect(score).toBeGreaterThanOrEqual(0);
    expect(score).toBeLessThanOrEqual(100);
  });
});

describe('clampAdjustment', () => {
  it('keeps in-range integers', () => {
    expect(clampAdjustment(0)).toBe(0);
    expect(clampAdjustment(7)).toBe(7);
    expect(clampAdjustment(-15)).toBe(-15);
    expect(clampAdjustment(15)).toBe(15);
  });

  it('clamps to ±MAX_ADJUSTMENT', () => {
    expect(MAX_ADJUSTMENT).toBe(15);
    expect(clampAdjustment(40)).toBe(15);
    expect(clampAdjustment(-40)).toBe(-15);
    expect(clampAdjustment(Infinity)).toBe(15);
    expect(clampAdjustment(-Infinity)).toBe(-15);
  });

  it('rounds to an integer and never yields -0', () => {
    expect(clampAdjustment(7.6)).toBe(8);
    expect(clampAdjustment(-7.6)).toBe(-8);
    expect(Object.is(clampAdjustment(-0.2), 0)).toBe(true);
  });

  it('treats NaN as no adjustment', () => {
    expect(clampAdjustment(Number.NaN)).toBe(0);
  });
});

describe('finalScore', () => {
  it('returns the base when there is no adjustment and no override', () => {
    expect(finalScore(40, 0, null)).toBe(40);
    expect(finalScore(40, 0, undefined)).toBe(40);
  });

  it('applies an in-range adjustment either way', () => {
    expect(finalScore(40, 10, null)).toBe(50);
    expect(finalScore(40, -10, null)).toBe(30);
  });

  it('bounds the adjustment: asking +40 gives +15, -40 gives -15', () => {
    expect(finalScore(40, 40, null)).toBe(55);
    expect(finalScore(40, -40, null)).toBe(25);
  });

  it('rounds a fractional adjustment', () => {
    expect(finalScore(40, 2.4, null)).toBe(42);
    expect(finalScore(40, 2.6, null)).toBe(43);
  });

  it('clamps the result to 0..100', () => {
    expect(finalScore(5, -15, null)).toBe(0);
    expect(finalScore(0, -15, null)).toBe(0);
    expect(finalScore(95, 15, null)).toBe(100);
    expect(finalScore(150, 0, null)).toBe(100);
    expect(finalScore(-20, 0, null)).toBe(0);
  });

  it('treats NaN base or adjustment as 0', () => {
    expect(finalScore(Number.NaN, 10, null)).toBe(10);
    expect(finalScore(40, Number.NaN, null)).toBe(40);
  });

  it('lets a manual override win over base and adjustment', () => {
    expect(finalScore(40, 15, 90)).toBe(90);
    expect(finalScore(75, -15, 10)).toBe(10);
  });

  it('honours an override of 0 (it is not "no override")', () => {
    expect(finalScore(75, 15, 0)).toBe(0);
  });

  it('clamps and rounds the override', () => {
    expect(finalScore(40, 0, 150)).toBe(100);
    expect(finalScore(40, 0, -5)).toBe(0);
    expect(finalScore(40, 0, 66.6)).toBe(67);
  });

  it('ignores a NaN override', () => {
    expect(finalScore(40, 5, Number.NaN)).toBe(45);
  });

  it('composes with baseScore', () => {
    expect(finalScore(baseScore(everything), 40, null)).toBe(90);
    expect(finalScore(baseScore({}), -40, null)).toBe(0);
  });
});

describe('SCORE_FIELDS', () => {
  it('lists exactly the contact fields that feed the base score', () => {
    expect([...SCORE_FIELDS].sort()).toEqual(['company', 'email', 'jobTitle', 'linkedin', 'phone', 'source', 'website'].sort());
  });

  it('is frozen', () => {
    expect(Object.isFrozen(SCORE_FIELDS)).toBe(true);
  });
});
