import { useEffect, useState } from 'preact/hooks';

/** Where the console lives; every screen is a path below it, so a link from an email opens that screen. */
export const BASE = '/app';

const listeners = new Set<() => void>();

/**
 * Whether the user has moved between screens in this page. On arrival, focus stays at the top of the document (where
 * the skip link is); after a move, each screen focuses its heading so keyboard and screen-reader users start there.
 */
export let moved = false;

/** The path below BASE (`/webhooks/123`), without query or hash. */
function current(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/';
  return path === '' ? '/' : path;
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = BASE + (to === '/' ? '' : to);
  moved = true;
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

addEventListener('popstate', () => {
  moved = true;
  for (const listener of listeners) listener();
});

/** The current path below BASE, re-rendering on navigation. */
export function usePath(): string {
  const [path, setPath] = useState(current);
  useEffect(() => {
    const update = () => setPath(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return path;
}

/**
 * Matches `/webhooks/:id` against a path; the parameters decoded, or null. Patterns are the route table's own, so a
 * screen's parameters are named where its route is.
 */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const h = have[i]!;
    if (w.startsWith(':')) {
      if (!h) return null;
      params[w.slice(1)] = decodeURIComponent(h);
    } else if (w !== h) return null;
  }
  return params;
}
