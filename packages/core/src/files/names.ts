// The pattern sits on its own line, right under the directive: a formatter cannot move it away from it.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/** A display name from a client's filename: no folders, no control characters, bounded. Never used as a path. */
export function cleanFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[/\\]/).pop() ?? '';
  const clean = base.replace(CONTROL_CHARACTERS, '').trim().slice(0, 200);
  return clean && clean !== '.' && clean !== '..' ? clean : 'file';
}

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;

/** The declared type when it is a plain `type/subtype`, else the neutral octet stream. */
export function cleanMediaType(declared: string | undefined): string {
  const type = (declared ?? '').split(';')[0]!.trim().toLowerCase();
  return MEDIA_TYPE.test(type) ? type : 'application/octet-stream';
}

/** `Content-Disposition` carrying any filename safely: an ASCII fallback and the exact name in RFC 5987 form. */
export function contentDisposition(kind: 'inline' | 'attachment', filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
