import { capturePlainForms } from './plain.ts';
import { renderAll } from './universal.ts';

/** The one global the script adds: a second copy of the script on the page sees it and stays silent. */
const GLOBAL = '__leadwireLeadCapture';

type Host = Window & { [GLOBAL]?: 1 };

function start(w: Host) {
  const d = w.document;
  const script = d.currentScript as HTMLScriptElement | null;
  const org = script?.getAttribute('data-org');
  if (!script || !org || w[GLOBAL]) return;
  w[GLOBAL] = 1;
  // The API root from the script's own address: .../api/embed/lead-capture.js, or the older /embed/lead-capture.js
  // served without the /api segment (spec, Versioning 3), whose API still lives under /api.
  const parent = new URL('..', script.src);
  const apiBase = /\/api\/$/.test(parent.pathname) ? parent.href : new URL('api/', parent).href;
  const endpoint = `${apiBase}capture/${encodeURIComponent(org)}`;
  capturePlainForms(w, endpoint, apiBase);
  const render = () => {
    try {
      renderAll(w, endpoint);
    } catch {
      // never into the host page
    }
  };
  // Loaded async before the page is parsed: wait for it; deferred, async later, or at the end of the body: now.
  if (d.readyState === 'loading') d.addEventListener('DOMContentLoaded', render);
  else render();
}

try {
  start(window);
} catch {
  // never into the host page
}
