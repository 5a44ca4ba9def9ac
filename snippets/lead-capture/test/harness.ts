import { readFileSync } from 'node:fs';
import { Window } from 'happy-dom';
import { define, runBundle, type Sent, stubTransports, type Transport } from '../../shared/test/page.ts';

/**
 * Runs the BUILT script (dist/lead-capture.js, the bytes the server serves) in a fresh happy-dom window per page, with
 * its transports under the test's control, and records what it sends.
 */

const BUNDLE = readFileSync(new URL('../dist/lead-capture.js', import.meta.url), 'utf8');
export const SCRIPT_SRC = 'https://api.leadwire.test/api/embed/lead-capture.js';
export const ORG = '0b7e6f5e-5f43-4c1e-9a55-2b1f6a3c9d10';
export const CAPTURE = `https://api.leadwire.test/api/capture/${ORG}`;

export interface PageOptions {
  html?: string;
  referrer?: string;
  cookies?: string[];
  gpc?: boolean;
  beacon?: Transport;
  fetch?: Transport;
  /** What the API answers the universal form's fetch (default 200 with a thank-you message). */
  answer?: { status: number; body: unknown };
  readyState?: DocumentReadyState;
}

export interface Page {
  win: Window;
  sent: Sent[];
  paste(attrs?: Record<string, string>, src?: string): void;
  /** Resolves once the fetches started so far have been answered and their answers shown. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

const pages: Page[] = [];

export function openPage(url: string, opts: PageOptions = {}): Page {
  const win = new Window({ url });
  win.document.write(opts.html ?? '<!doctype html><html><head><title>Site</title></head><body></body></html>');
  define(win.document, 'referrer', opts.referrer ?? '');
  for (const c of opts.cookies ?? []) win.document.cookie = c;
  if (opts.gpc !== undefined) define(win.navigator, 'globalPrivacyControl', opts.gpc);
  if (opts.readyState) define(win.document, 'readyState', opts.readyState);

  const answer = opts.answer ?? { status: 200, body: { ok: true, message: 'Thanks, we will be in touch.' } };
  const { sent, pending } = stubTransports(
    win,
    opts,
    () => new win.Response(JSON.stringify(answer.body), { status: answer.status, headers: { 'content-type': 'application/json' } }),
  );

  const page: Page = {
    win,
    sent,
    paste(attrs = { 'data-org': ORG }, src = SCRIPT_SRC) {
      runBundle(win, BUNDLE, attrs, src);
    },
    async settle() {
      while (pending.length) await Promise.all(pending.splice(0));
      // The answer's JSON is read and shown a few microtasks later; a macrotask turn covers them.
      await new Promise((resolve) => setTimeout(resolve, 0));
    },
    close: () => win.happyDOM.close(),
  };
  pages.push(page);
  return page;
}

export async function closePages(): Promise<void> {
  await Promise.all(pages.splice(0).map((p) => p.close()));
}

/**
 * Submits `form` as a person pressing its button does, and reports whether the submission goes on to the form's
 * action: the last listener (the window's, in the bubble phase) sees the event arrive uncancelled, then stops
 * happy-dom's navigation.
 */
export function submit(page: Page, form: HTMLFormElement): { goesOn: boolean } {
  const seen = { goesOn: false };
  const last = (e: Event) => {
    seen.goesOn = !e.defaultPrevented;
    e.preventDefault();
  };
  page.win.addEventListener('submit', last as never);
  try {
    form.requestSubmit();
  } finally {
    page.win.removeEventListener('submit', last as never);
  }
  return seen;
}
