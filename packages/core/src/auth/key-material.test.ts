import { describe, expect, it } from 'vitest';
import { bearerToken, displayPrefix, generateKeyValue, hashKey, isWellFormedKey, KEY_PREFIX } from './key-material.ts';

describe('key material', () => {
  it('generates ck_live_ keys with 256 random bits in base62, all distinct', () => {
    const keys = new Set(Array.from({ length: 2000 }, generateKeyValue));
    expect(keys.size).toBe(2000);
    for (const k of keys) {
      expect(k.startsWith(KEY_PREFIX)).toBe(true);
      expect(k).toMatch(/^ck_live_[0-9A-Za-z]{43}$/);
      expect(isWellFormedKey(k)).toBe(true);
    }
  });

  it('rejects malformed keys', () => {
    const good = generateKeyValue();
    expect(isWellFormedKey(good.slice(0, -1))).toBe(false);
    expect(isWellFormedKey(`${good}x`)).toBe(false);
    expect(isWellFormedKey(good.replace('ck_live_', 'ck_test_'))).toBe(false);
    expect(isWellFormedKey(`${good.slice(0, -1)}-`)).toBe(false);
  });

  it('hashes to sha-256 hex and shows only a short prefix', () => {
    const k = generateKeyValue();
    expect(hashKey(k)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashKey(k)).not.toContain(k.slice(8));
    expect(displayPrefix(k)).toBe(k.slice(0, 14));
  });

  it('parses bearer headers', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
