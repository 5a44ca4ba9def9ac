import { describe, expect, it } from 'vitest';
import { cleanFilename, cleanMediaType, contentDisposition } from './names.ts';

describe('cleanFilename', () => {
  it('drops folders and control characters', () => {
    expect(cleanFilename('../../etc/passwd')).toBe('passwd');
    expect(cleanFilename('C:\\Users\\ada\\cv.pdf')).toBe('cv.pdf');
    expect(cleanFilename('re\u0000port\n.txt')).toBe('report.txt');
  });
  it('falls back to "file" when nothing usable is left', () => {
    expect(cleanFilename(undefined)).toBe('file');
    expect(cleanFilename('dir/')).toBe('file');
    expect(cleanFilename('..')).toBe('file');
  });
});

describe('cleanMediaType', () => {
  it('keeps a plain type/subtype, lowercased, without parameters', () => {
    expect(cleanMediaType('Application/PDF')).toBe('application/pdf');
    expect(cleanMediaType('text/plain; charset=utf-8')).toBe('text/plain');
  });
  it('replaces anything else with application/octet-stream', () => {
    expect(cleanMediaType('')).toBe('application/octet-stream');
    expect(cleanMediaType('text/html\r\nx-injected: 1')).toBe('application/octet-stream');
    expect(cleanMediaType('nonsense')).toBe('application/octet-stream');
  });
});

describe('contentDisposition', () => {
  it('quotes an ASCII fallback and carries the exact name encoded', () => {
    expect(contentDisposition('attachment', 'Résumé "final".pdf')).toBe(
      `attachment; filename="R_sum_ _final_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.pdf`,
    );
  });
});
