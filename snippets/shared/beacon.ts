/**
 * Sends a body that must leave even as the page unloads, without ever throwing into the host page: sendBeacon (a
 * text/plain body, no CORS preflight), or where it is missing, refuses (queue full) or throws, fetch with keepalive.
 * Neither answer is read: there is nothing the page could do with it. Shared by the browser packages, each of which
 * bundles its own copy (a folder without package.json is not a package of its own for snippets/build.ts).
 */
export function beacon(w: Window, url: string, body: string): void {
  try {
    if (w.navigator.sendBeacon(url, body)) return;
  } catch {
    // fall through to fetch
  }
  try {
    w.fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit' }).catch(() => undefined);
  } catch {
    // no transport left: the body is lost, the page is unharmed
  }
}
