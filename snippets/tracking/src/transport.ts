/**
 * Posts a page view without ever throwing into the host page. sendBeacon survives the page being unloaded and sends
 * a text/plain body (no CORS preflight); where it is missing, refuses (queue full) or throws, fetch with keepalive
 * carries the same body. Neither response is read: there is nothing the page could do with it.
 */
export function send(w: Window, url: string, body: string): void {
  try {
    if (w.navigator.sendBeacon(url, body)) return;
  } catch {
    // fall through to fetch
  }
  try {
    w.fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit' }).catch(() => undefined);
  } catch {
    // no transport left: the view is lost, the page is unharmed
  }
}
