import { describe, expect, it } from 'vitest';
import { sniffImage } from './sniff.ts';

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('sniffImage', () => {
  it('recognises JPEG, PNG, GIF and WebP by their signatures', () => {
    expect(sniffImage(bytes([0xff, 0xd8, 0xff, 0xe0], 'JFIF'))).toBe('image/jpeg');
    expect(sniffImage(bytes([0x89], 'PNG\r\n\x1a\n', [0, 0, 0, 13]))).toBe('image/png');
    expect(sniffImage(bytes('GIF89a', [1, 0]))).toBe('image/gif');
    expect(sniffImage(bytes('GIF87a'))).toBe('image/gif');
    expect(sniffImage(bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 '))).toBe('image/webp');
  });

  it('refuses everything else, whatever a client would declare', () => {
    expect(sniffImage(bytes('<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>'))).toBeNull();
    expect(sniffImage(bytes('%PDF-1.7'))).toBeNull();
    expect(sniffImage(bytes('RIFF', [0, 0, 0, 0], 'WAVE'))).toBeNull();
    expect(sniffImage(bytes('GIF8'))).toBeNull();
    expect(sniffImage(bytes([0x89], 'PNG'))).toBeNull();
    expect(sniffImage(Buffer.alloc(0))).toBeNull();
  });
});
