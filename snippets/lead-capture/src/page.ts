/** What the page says about the visit, sent with every submission as the forms' reserved keys. */

const MAX_UTM = 20;
const MAX_URL = 2048;

/** `utm_*` of the page address, `_referrer` and `_landingPage` (the page the form is on, without its fragment). */
export function attribution(w: Window): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  new URLSearchParams(w.location.search).forEach((v, k) => {
    if (/^utm_\w{1,40}$/i.test(k) && v && !(k in out) && n++ < MAX_UTM) out[k] = v.slice(0, 500);
  });
  const referrer = w.document.referrer;
  if (referrer && referrer.length <= MAX_URL) out._referrer = referrer;
  const page = w.location.href.split('#')[0]!;
  if (page.length <= MAX_URL) out._landingPage = page;
  return out;
}

/**
 * The tracking snippet's visitor id (`lw_vid`), when that snippet left one and the visitor has not opted out (Global
 * Privacy Control, Do Not Track): the server then attaches that browser's earlier page views to the contact.
 */
export function visitor(w: Window): string | undefined {
  try {
    const n = w.navigator as Navigator & { globalPrivacyControl?: boolean };
    if (n.globalPrivacyControl === true || n.doNotTrack === '1') return undefined;
    return /(?:^|;\s*)lw_vid=([\w-]{8,64})/.exec(w.document.cookie)?.[1];
  } catch {
    // cookies out of reach (a sandboxed frame): no visitor id
    return undefined;
  }
}
