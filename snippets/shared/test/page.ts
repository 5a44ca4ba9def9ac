import { runInNewContext } from 'node:vm';
import type { Window } from 'happy-dom';

/**
 * What the browser packages' test harnesses share: the transports under the test's control, and running the built
 * bundle as a pasted script would run.
 */

export interface Sent {
  via: 'beacon' | 'fetch';
  url: string;
  body: Record<string, unknown>;
  init?: RequestInit;
}

/** Works, is missing, throws, refuses (sendBeacon's `false`: queue full) or rejects (fetch's network error). */
export type Transport = 'ok' | 'missing' | 'throws' | 'refuses' | 'rejects';

export const define = (target: object, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, configurable: true, writable: true });

/**
 * Replaces `navigator.sendBeacon` and `window.fetch` with stand-ins that behave as asked and record what is sent.
 * `answer` makes each sent fetch's response; `pending` holds every fetch promise handed out, for a harness to await.
 */
export function stubTransports(win: Window, modes: { beacon?: Transport; fetch?: Transport }, answer: () => unknown) {
  const sent: Sent[] = [];
  const pending: Promise<unknown>[] = [];
  const beacon = modes.beacon ?? 'ok';
  define(
    win.navigator,
    'sendBeacon',
    beacon === 'missing'
      ? undefined
      : (u: string, body: unknown) => {
          if (beacon === 'throws') throw new TypeError('sendBeacon: blocked');
          if (beacon === 'refuses') return false;
          if (typeof body !== 'string') throw new Error(`expected a string body (text/plain), got ${typeof body}`);
          sent.push({ via: 'beacon', url: u, body: JSON.parse(body) });
          return true;
        },
  );
  const fetchMode = modes.fetch ?? 'ok';
  define(
    win,
    'fetch',
    fetchMode === 'missing'
      ? undefined
      : (u: string, init: RequestInit) => {
          if (fetchMode === 'throws') throw new TypeError('fetch: blocked');
          if (fetchMode === 'rejects') {
            const p = Promise.reject(new TypeError('Failed to fetch'));
            pending.push(p.catch(() => undefined));
            return p;
          }
          sent.push({ via: 'fetch', url: u, body: JSON.parse(init.body as string), init });
          const p = Promise.resolve(answer());
          pending.push(p);
          return p;
        },
  );
  return { sent, pending };
}

/**
 * Runs `bundle` as a `<script src>` with `attrs` pasted into the page: `document.currentScript` is that element while
 * it runs. A context of its own holds only this page's window and the two URL classes: the bundle may rely on nothing
 * else (JavaScript's own built-ins aside), as in a browser where `window` is all there is.
 */
export function runBundle(win: Window, bundle: string, attrs: Record<string, string>, src: string): void {
  const script = win.document.createElement('script');
  script.src = src;
  for (const [k, v] of Object.entries(attrs)) script.setAttribute(k, v);
  define(win.document, 'currentScript', script);
  try {
    runInNewContext(bundle, { window: win, URL: win.URL, URLSearchParams: win.URLSearchParams });
  } finally {
    define(win.document, 'currentScript', null);
  }
}
