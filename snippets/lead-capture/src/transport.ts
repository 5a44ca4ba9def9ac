/**
 * The two ways a submission leaves. Bodies are JSON sent as text/plain: a "simple" cross-origin request, never
 * preflighted. Neither function throws into the host page.
 */

/** For a page that is about to navigate away (a plain form submitting). */
export { beacon } from '../../shared/beacon.ts';

export interface Answer {
  status: number;
  body: { message?: string; error?: string; issues?: { path: string; message: string }[] };
}

/**
 * For the universal form, which waits for the answer: fetch, its status and JSON body; status 0 when it could not be
 * sent or read. Without fetch, a beacon that was queued counts as sent.
 */
export async function post(w: Window, url: string, body: string): Promise<Answer> {
  try {
    if (typeof w.fetch !== 'function') return { status: w.navigator.sendBeacon(url, body) ? 200 : 0, body: {} };
    const res = await w.fetch(url, { method: 'POST', body, credentials: 'omit' });
    let json: Answer['body'] = {};
    try {
      json = (await res.json()) as Answer['body'];
    } catch {
      // not JSON (a proxy's error page): the status alone decides
    }
    return { status: res.status, body: json && typeof json === 'object' ? json : {} };
  } catch {
    return { status: 0, body: {} };
  }
}
