import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import { requireRole } from '../auth/internal.ts';
import type { Deps } from '../context.ts';
import { iso } from '../records/dates.ts';
import { AppError, errors } from '../errors.ts';
import type { AutomationTrigger } from '../events/names.ts';
import { checkUrlAddress } from '../webhooks/transport/address.ts';
import { newSigningSecret } from '../webhooks/transport/secret.ts';
import type { MeOutput, SubscribeInput, Subscription } from './schemas.ts';
import * as q from './sql.ts';

const toSubscription = (r: q.HookRow): Subscription => ({
  id: r.id,
  hookUrl: r.url,
  triggerEvent: r.events[0] as AutomationTrigger,
  secret: r.secret,
  enabled: r.enabled,
  disabledReason: r.disabled_reason,
  createdAt: iso(r.created_at),
});

/**
 * Subscribes a REST hook: owners and admins, as for webhook endpoints (a hook sends the organization's data out). The
 * address is checked once here, outside the transaction (it may resolve DNS). Unlike a webhook endpoint, whose owner
 * sees `enabled: false` and fixes the URL, a hook that can never be delivered to is refused (422 hook_url_refused,
 * nothing saved): a platform reads any 2xx as a working subscription and would turn on a workflow that never fires.
 * Subscribing the same URL to the same trigger again returns the existing hook, so a platform retrying after a
 * time-out creates no second one.
 */
export async function subscribe(
  deps: Pick<Deps, 'clock' | 'resolver' | 'config'> & { db: Db },
  actor: InternalActor,
  input: SubscribeInput,
): Promise<Subscription> {
  requireRole(actor, 'owner', 'admin');
  const check = await checkUrlAddress(input.hookUrl, {
    resolver: deps.resolver,
    allowLoopback: deps.config.WEBHOOKS_UNSAFE_ALLOW_LOOPBACK,
  });
  if (!check.ok) {
    throw new AppError('hook_url_refused', `hookUrl is refused: ${check.reason}. Nothing was subscribed`, { reason: check.reason });
  }
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    await tx.run(q.LOCK_SUBSCRIPTION, { key: `rest-hook:${actor.orgId}:${input.triggerEvent}:${input.hookUrl}` });
    const [existing] = await tx.run(q.FIND_HOOK, { orgId: actor.orgId, url: input.hookUrl, event: input.triggerEvent });
    if (existing) return toSubscription(existing);
    const [row] = await tx.run(q.INSERT_HOOK, {
      id: randomUUID(),
      orgId: actor.orgId,
      url: input.hookUrl,
      event: input.triggerEvent,
      enabled: true,
      disabledReason: null,
      secret: newSigningSecret(),
      userId: actor.userId,
      apiKeyId: actor.apiKeyId,
      now,
    });
    return toSubscription(row!);
  });
}

/**
 * Removes a REST hook of the caller's organization. The key that subscribed it may always remove it (a platform turning
 * a workflow off); anyone else needs the owner or admin role. A second call answers 404: the hook is gone.
 */
export async function unsubscribe(db: Db, actor: InternalActor, id: string): Promise<void> {
  return db.transaction(async (tx) => {
    const [hook] = await tx.run(q.GET_HOOK, { id, orgId: actor.orgId });
    if (!hook) throw errors.notFound(`No automation subscription with id ${id}`);
    if (!(actor.apiKeyId !== null && hook.api_key_id === actor.apiKeyId)) requireRole(actor, 'owner', 'admin');
    await tx.run(q.DELETE_HOOK, { id, orgId: actor.orgId });
  });
}

/** What a platform shows as the connection's label, and proof that the key works. */
export async function whoAmI(db: Db, actor: InternalActor): Promise<MeOutput> {
  const [row] = await db.run(q.ME, { userId: actor.userId, orgId: actor.orgId });
  if (!row) throw errors.unauthorized();
  return {
    organization: { id: row.organization_id, name: row.organization_name },
    user: { id: row.user_id, email: row.email, name: row.user_name },
    role: actor.role,
    via: actor.via,
    label: `${row.organization_name} (${row.email})`,
  };
}
