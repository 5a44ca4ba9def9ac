import { describe, expect, it } from 'vitest';
import { normalizeDomain } from './domain.ts';

describe('normalizeDomain', () => {
  it.each([
    ['example.com', 'example.com'],
    ['Example.COM', 'example.com'],
    ['  example.com  ', 'example.com'],
    ['www.example.com', 'example.com'],
    ['https://www.example.com/about/team?x=1#top', 'example.com'],
    ['http://EXAMPLE.com:8080', 'example.com'],
    ['example.com/path', 'example.com'],
    ['example.com.', 'example.com'],
    ['https://user:pw@shop.example.co.uk/', 'shop.example.co.uk'],
    ['ftp://files.example.org', 'files.example.org'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['www2.example.com', 'www2.example.com'],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeDomain(input)).toBe(expected);
  });

  it.each([
    '',
    '   ',
    'localhost',
    'http://localhost:3000',
    '127.0.0.1',
    'http://[::1]/',
    'exa mple.com',
    'example',
    'example.c',
    '-bad.com',
    'bad-.com',
    'a..b.com',
    'example.123',
    'http://',
  ])('rejects %j', (input) => {
    expect(normalizeDomain(input)).toBeNull();
  });
});
