import { forgetVisitor, identityIn, visitorId } from './identity.ts';
import { onNavigation } from './navigation.ts';
import { automated, optedOut } from './privacy.ts';
import { beacon } from '../../shared/beacon.ts';

/** The one global the snippet adds: a second copy of the snippet on the page sees it and stays silent. */
const GLOBAL = '__leadwireTracking';
const TITLE_MAX = 300;

type Host = Window & { [GLOBAL]?: 1 };

function start(w: Host) {
  const d = w.document;
  const script = d.currentScript as HTMLScriptElement | null;
  const org = script?.getAttribute('data-org');
  if (!script || !org || w[GLOBAL] || automated(w.navigator)) return;
  w[GLOBAL] = 1;
  // The collect endpoint sits beside the script: .../api/embed/tracking.js -> .../api/track/pageview.
  const endpoint = new URL('../track/pageview', script.src).href;
  const anonymous = optedOut(w.navigator);
  if (anonymous) forgetVisitor(w);
  const visitor = anonymous ? undefined : visitorId(w);
  let lastPath: string | undefined;
  let referrer = anonymous ? null : d.referrer || null;

  const pageView = () => {
    try {
      const loc = w.location;
      // Only a new path is a new page: query or hash changes (filters, tabs, utm clean-up) are not.
      if (loc.pathname === lastPath) return;
      lastPath = loc.pathname;
      const url = anonymous ? loc.origin + loc.pathname : loc.href.split('#')[0]!;
      const identity = anonymous ? {} : identityIn(loc.search);
      beacon(w, endpoint, JSON.stringify({ org, url, referrer, title: d.title.slice(0, TITLE_MAX) || null, visitor, ...identity }));
      // In a single-page app the previous page is the referrer of the next one.
      if (!anonymous) referrer = url;
    } catch {
      // never into the host page
    }
  };
  pageView();
  onNavigation(w, pageView);
}

try {
  start(window);
} catch {
  // never into the host page
}
