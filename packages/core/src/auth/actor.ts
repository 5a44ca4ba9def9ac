import type { ApiKeyType, Plan, Role } from '@leadwire/db';
import type { EventSource } from '../events/outbox.ts';

/** Who is acting: the key (and the user who created it) a request authenticated with. */
export interface Actor {
  orgId: string;
  userId: string;
  apiKeyId: string;
  keyType: ApiKeyType;
  permissions: readonly string[];
  /** The role of the user the key acts as. */
  role: Role;
  plan: Plan;
  contactBooster: number;
  /** The organization's contact counter as read while authenticating (unlocked): saves the upsert a round trip. */
  contactCount?: number;
}

/** Who is acting on the internal surface: a signed-in user (session) or an Internal key acting as its creator. */
export interface InternalActor {
  orgId: string;
  userId: string;
  role: Role;
  via: 'session' | 'internal_key';
  sessionId: string | null;
  apiKeyId: string | null;
  plan: Plan;
  contactBooster: number;
  /** The `source` of the events this actor's changes emit; `app` when unset (automation-platform actions: `zapier`). */
  eventSource?: EventSource;
}
