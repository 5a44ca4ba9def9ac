import { forgetVisitor, identityIn, visitorId } from './identity.ts';
import { onNavigation } from './navigation.ts';
import { automated, optedOut } from './privacy.ts';
import { beacon } from '../../shared/beacon.ts';

/** The global the snippet guards with: a second copy of the snippet on the page sees it and stays silent. */
const GLOBAL = '__leadwireTracking';
const TITLE_MAX = 300;

/** `window.leadwire`: the page's handle for custom events; before the snippet loads, the docs' one-line stub queues calls in `q`. */
type Api = { q?: ArrayLike<unknown>[]; track: (name: unknown, props?: unknown) => void };
type Host = Window & { [GLOBAL]?: 1; leadwire?: Api };

function start(w: Host) {
  const d = w.document;
  const script = d.currentScript as HTMLScriptElement | null;
  const org = script?.getAttribute('data-org');
  if (!script || !org || w[GLOBAL] || automated(w.navigator)) return;
  w[GLOBAL] = 1;
  const anonymous = optedOut(w.navigator);
  if (anonymous) forgetVisitor(w);
  const visitor = anonymous ? undefined : visitorId(w);
  let lastPath: string | undefined;
  let referrer = anonymous ? null : d.referrer || null;
  const here = () => (anonymous ? w.location.origin + w.location.pathname : w.location.href.split('#')[0]!);
  /**
   * One request to a collect endpoint beside the script (.../api/embed/tracking.js -> .../api/track/pageview,
   * .../api/track/event), with who and where: nothing that identifies under GPC or DNT. Props that cannot become JSON
   * (a cycle, a BigInt) lose the call, never the page.
   */
  const collect = (what: string, body: object) => {
    try {
      const at = { org, url: here(), visitor, ...(anonymous ? {} : identityIn(w.location.search)) };
      beacon(w, new URL('../track/' + what, script.src).href, JSON.stringify({ ...at, ...body }));
    } catch {
      // never into the host page
    }
  };

  const pageView = () => {
    const path = w.location.pathname;
    // Only a new path is a new page: query or hash changes (filters, tabs, utm clean-up) are not.
    if (path === lastPath) return;
    lastPath = path;
    collect('pageview', { referrer, title: d.title.slice(0, TITLE_MAX) || null });
    // In a single-page app the previous page is the referrer of the next one.
    if (!anonymous) referrer = here();
  };
  pageView();
  onNavigation(w, pageView);
  /** A custom event; the server checks the name and props (and drops what it refuses: the page is never told). */
  const track = (name: unknown, props?: unknown) => collect('event', { name, props });
  // Calls queued by the stub before the snippet loaded, in order, then the real thing in its place.
  const queued = w.leadwire?.q;
  w.leadwire = { track };
  queued?.forEach((args) => track(args[0], args[1]));
}

try {
  start(window);
} catch {
  // never into the host page
}
