/**
 * Calls `onChange` after every history navigation of a single-page app: pushState, replaceState and popstate
 * (back/forward). The host's own call runs first and unchanged, errors included; `onChange` must not throw.
 */
export function onNavigation(w: Window, onChange: () => void): void {
  const h = w.history;
  for (const method of ['pushState', 'replaceState'] as const) {
    // Taken off the object on purpose: it is called below with whatever `this` the host calls it with.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const original = h[method];
    h[method] = function (this: History, ...args: Parameters<History['pushState']>) {
      original.apply(this, args);
      onChange();
    };
  }
  w.addEventListener('popstate', onChange);
}
