import { readFileSync } from 'node:fs';
import { Window } from 'happy-dom';
import { define, runBundle, type Sent, stubTransports, type Transport } from '../../shared/test/page.ts';

/**
 * Runs the BUILT snippet (dist/tracking.js, the bytes the server serves) in a fresh happy-dom window per page, with
 * the browser features the snippet depends on under the test's control, and records what it sends.
 */

const BUNDLE = readFileSync(new URL('../dist/tracking.js', import.meta.url), 'utf8');
export const SCRIPT_SRC = 'https://api.leadwire.test/api/embed/tracking.js';
export const COLLECT = 'https://api.leadwire.test/api/track/pageview';
export const ORG = '0b7e6f5e-5f43-4c1e-9a55-2b1f6a3c9d10';

export interface PageOptions {
  webdriver?: boolean;
  gpc?: boolean;
  doNotTrack?: string;
  referrer?: string;
  title?: string;
  /** Cookies already on the page, one per entry. */
  cookies?: string[];
  beacon?: Transport;
  fetch?: Transport;
  /** document.cookie throws, as in a sandboxed frame. */
  cookiesBlocked?: boolean;
}

export interface Page {
  win: Window;
  sent: Sent[];
  /** Every value written to document.cookie, attributes included. */
  cookieWrites: string[];
  /** Pastes the snippet (runs the bundle with this script element as document.currentScript). */
  paste(attrs?: Record<string, string>, src?: string): void;
  close(): Promise<void>;
}

const pages: Page[] = [];

export function openPage(url: string, opts: PageOptions = {}): Page {
  const win = new Window({ url });
  const nav = win.navigator;
  // happy-dom calls itself automated; a real visitor's browser does not.
  define(nav, 'webdriver', opts.webdriver ?? false);
  if (opts.gpc !== undefined) define(nav, 'globalPrivacyControl', opts.gpc);
  define(nav, 'doNotTrack', opts.doNotTrack ?? null);
  define(win.document, 'referrer', opts.referrer ?? '');
  win.document.title = opts.title ?? 'Home';

  const cookieWrites: string[] = [];
  let proto = Object.getPrototypeOf(win.document) as object;
  while (!Object.getOwnPropertyDescriptor(proto, 'cookie')) proto = Object.getPrototypeOf(proto) as object;
  const cookie = Object.getOwnPropertyDescriptor(proto, 'cookie')!;
  Object.defineProperty(win.document, 'cookie', {
    configurable: true,
    get() {
      if (opts.cookiesBlocked) throw new win.DOMException('The document is sandboxed', 'SecurityError');
      return cookie.get!.call(win.document);
    },
    set(v: string) {
      if (opts.cookiesBlocked) throw new win.DOMException('The document is sandboxed', 'SecurityError');
      cookieWrites.push(v);
      cookie.set!.call(win.document, v);
    },
  });
  for (const c of opts.cookies ?? []) cookie.set!.call(win.document, c);

  const { sent } = stubTransports(win, opts, () => new win.Response('', { status: 202 }));

  const page: Page = {
    win,
    sent,
    cookieWrites,
    paste(attrs = { 'data-org': ORG }, src = SCRIPT_SRC) {
      runBundle(win, BUNDLE, attrs, src);
    },
    close: () => win.happyDOM.close(),
  };
  pages.push(page);
  return page;
}

export async function closePages(): Promise<void> {
  await Promise.all(pages.splice(0).map((p) => p.close()));
}

/** Moves the page to `url` the way the browser's back button does, then fires popstate. */
export function goBack(page: Page, url: string) {
  page.win.happyDOM.setURL(url);
  page.win.dispatchEvent(new page.win.PopStateEvent('popstate', { state: null }));
}
