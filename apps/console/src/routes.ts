import type { FunctionComponent } from 'preact';
import type { Me } from './api.ts';
import { MANAGERS, type ScreenProps } from './screen.ts';
import { Keys } from './screens/keys.tsx';
import { Members } from './screens/members.tsx';
import { Overview } from './screens/overview.tsx';
import { Trash } from './screens/trash.tsx';

export { MANAGERS };

export interface Route {
  path: string;
  screen: FunctionComponent<ScreenProps>;
  /** The navigation entry, for the screens that have one (a detail screen is reached from its list). */
  nav?: string;
  /** Roles that may open the screen; others do not see it offered (the server refuses them anyway). */
  roles?: readonly Me['role'][];
}

/** Every screen of the console, in navigation order. */
export const ROUTES: Route[] = [
  { path: '/', screen: Overview, nav: 'Overview' },
  // Part K: every role opens these; each screen offers only what the role may do.
  { path: '/keys', screen: Keys, nav: 'API keys' },
  { path: '/members', screen: Members, nav: 'Members' },
  { path: '/trash', screen: Trash, nav: 'Trash' },
];

export const mayOpen = (route: Route, me: Me) => !route.roles || route.roles.includes(me.role);
