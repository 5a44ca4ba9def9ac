export type ImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/** Bytes needed to tell the accepted image types apart. */
export const SNIFF_BYTES = 12;

const ascii = (head: Buffer, start: number, text: string) => head.subarray(start, start + text.length).toString('latin1') === text;

/**
 * The image type the leading bytes prove, whatever the client declared; null for anything else (an SVG, which can
 * carry script, included).
 */
export function sniffImage(head: Buffer): ImageType | null {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (ascii(head, 0, 'GIF87a') || ascii(head, 0, 'GIF89a')) return 'image/gif';
  if (head.length >= 12 && ascii(head, 0, 'RIFF') && ascii(head, 8, 'WEBP')) return 'image/webp';
  return null;
}
