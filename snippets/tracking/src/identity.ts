/** The first-party cookie holding the visitor id, on the website's own domain: `lw_vid`. */
const READ = /(?:^|;\s*)lw_vid=([\w-]{8,64})/;
/** A year after the last visit: each page view renews it. */
const MAX_AGE_S = 31_536_000;

/** 28 characters from 128 random bits; crypto.getRandomValues works on plain http pages too (randomUUID does not). */
const newId = (w: Window): string =>
  Array.from(w.crypto.getRandomValues(new Uint32Array(4)), (x) => x.toString(36).padStart(7, '0')).join('');

/** Writes the cookie (a max-age of 0 removes it); a page whose cookies cannot be reached (a sandboxed frame) throws. */
function setCookie(w: Window, value: string, maxAge: number) {
  try {
    w.document.cookie = `lw_vid=${value};max-age=${maxAge};path=/;samesite=lax${w.location.protocol === 'https:' ? ';secure' : ''}`;
  } catch {
    // cookies out of reach: nothing is remembered
  }
}

/**
 * The visitor id remembered in the cookie, or a new one. Where cookies cannot be read (sandboxed frames throw on
 * document.cookie) the page still counts, under an id that lives as long as the page.
 */
export function visitorId(w: Window): string {
  let id: string | undefined;
  try {
    id = READ.exec(w.document.cookie)?.[1];
  } catch {
    // as above
  }
  id ??= newId(w);
  setCookie(w, id, MAX_AGE_S);
  return id;
}

/** Opted-out visitors lose the cookie an earlier visit may have set. */
export const forgetVisitor = (w: Window): void => setCookie(w, '', 0);

/** `?email=` or `?c=<contact id>` in the page address identifies the visitor. */
export function identityIn(search: string): { email?: string; contactId?: string } {
  const q = new URLSearchParams(search);
  return { email: q.get('email') || undefined, contactId: q.get('c') || undefined };
}
