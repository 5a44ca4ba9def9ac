import { describe, expect, it } from 'vitest';
import { phoneDigits } from './phone.ts';

describe('phoneDigits', () => {
  it('keeps only the digits, so typed and E.164 forms of one number agree', () => {
    expect(phoneDigits('+1 (555) 010-2000')).toBe('15550102000');
    expect(phoneDigits('+15550102000')).toBe('15550102000');
    expect(phoneDigits('555.010.2000')).toBe('5550102000');
  });
  it('gives an empty string for text without digits', () => {
    expect(phoneDigits('n/a')).toBe('');
  });
});
