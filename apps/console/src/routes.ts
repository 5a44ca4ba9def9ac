import type { FunctionComponent } from 'preact';
import type { Me } from './api.ts';
import { MANAGERS, type ScreenProps } from './screen.ts';
import { FormScreen, Forms, NewForm } from './screens/forms.tsx';
import { Keys } from './screens/keys.tsx';
import { Members } from './screens/members.tsx';
import { Overview } from './screens/overview.tsx';
import { Trash } from './screens/trash.tsx';
import { Analytics } from './screens/analytics.tsx';
import { Attempt } from './screens/attempt.tsx';
import { ContactScreen } from './screens/contact.tsx';
import { Webhook } from './screens/webhook.tsx';
import { NewEndpoint, Webhooks } from './screens/webhooks.tsx';
import { Website } from './screens/website.tsx';
import { WorkflowDetail } from './screens/workflow.tsx';
import { Workflows } from './screens/workflows.tsx';

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
  // API keys, Trash and Members open for every role; each screen offers only what the role may do.
  { path: '/keys', screen: Keys, nav: 'API keys' },
  { path: '/webhooks', screen: Webhooks, nav: 'Webhooks', roles: MANAGERS },
  { path: '/webhooks/new', screen: NewEndpoint, roles: MANAGERS },
  { path: '/webhooks/:id', screen: Webhook, roles: MANAGERS },
  { path: '/webhooks/:id/attempts/:attemptId', screen: Attempt, roles: MANAGERS },
  { path: '/forms', screen: Forms, nav: 'Forms' },
  { path: '/forms/new', screen: NewForm },
  { path: '/forms/:id', screen: FormScreen },
  { path: '/workflows', screen: Workflows, nav: 'Workflows' },
  { path: '/workflows/:id', screen: WorkflowDetail },
  { path: '/analytics', screen: Analytics, nav: 'Analytics' },
  // Every role reads contacts; reached from the identified visitors of /analytics.
  { path: '/contacts/:id', screen: ContactScreen },
  { path: '/website', screen: Website, nav: 'Website' },
  { path: '/trash', screen: Trash, nav: 'Trash' },
  { path: '/members', screen: Members, nav: 'Members' },
];

export const mayOpen = (route: Route, me: Me) => !route.roles || route.roles.includes(me.role);
