import { useLocation } from 'preact-iso/router';

/**
 * Routing is preact-iso's (LocationProvider, Router, Route in app.tsx): history routing, and a click on any link below
 * BASE handled in the page (modified clicks, other targets and downloads left to the browser). What is ours: the
 * console lives below BASE, so a link from an email opens that screen; and where focus goes after a move.
 */
export const BASE = '/app';

/** The address of a screen's path (`/webhooks/1` -> `/app/webhooks/1`). */
export const href = (to: string) => BASE + (to === '/' ? '' : to);

/**
 * Whether the user has moved between screens in this page. On arrival, focus stays at the top of the document (where
 * the skip link is); after a move, each screen focuses its heading so keyboard and screen-reader users start there.
 */
export let moved = false;
let arrival: string | undefined;

/** The current path below BASE (`/webhooks/123`), re-rendering on navigation; notes the first move away from arrival. */
export function usePath(): string {
  const { path } = useLocation();
  arrival ??= path;
  if (path !== arrival) moved = true;
  return path.startsWith(BASE) ? path.slice(BASE.length) || '/' : '/';
}

/** Moves to a screen from code (after a create or a delete): `navigate('/webhooks/1')`, or replacing the entry. */
export function useNavigate(): (to: string, opts?: { replace?: boolean }) => void {
  const { route } = useLocation();
  return (to, opts = {}) => {
    moved = true;
    route(href(to), opts.replace);
  };
}
