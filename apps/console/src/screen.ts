import type { Me } from './api.ts';

/** What every screen is given: who is signed in, and the parameters of its route (`/webhooks/:id` -> `{ id }`). */
export interface ScreenProps {
  me: Me;
  params: Record<string, string>;
}

/** The roles that manage a workspace's integrations; the server refuses members these actions. */
export const MANAGERS = ['owner', 'admin'] as const;

export const isManager = (me: Me) => me.role === 'owner' || me.role === 'admin';
