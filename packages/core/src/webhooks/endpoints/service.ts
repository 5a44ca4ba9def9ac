import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { InternalActor } from '../../auth/actor.ts';
import { requireRole } from '../../auth/internal.ts';
import type { Deps } from '../../context.ts';
import { iso, isoOrNull } from '../../records/dates.ts';
import { refuseForeignCursor, toPage } from '../../records/pagination.ts';
import { AppError, errors } from '../../errors.ts';
import { emitEvents } from '../../events/outbox.ts';
import { endpointDisabled, endpointEnabled } from '../delivery/operational.ts';
import { checkUrlAddress } from '../transport/address.ts';
import { newSigningSecret } from '../transport/secret.ts';
import {
  shownEvents,
  storedEvents,
  type WebhookEndpointCreateInput,
  type WebhookEndpointListInput,
  type WebhookEndpointUpdateInput,
  type WebhookEndpointView,
} from './schemas.ts';
import * as q from './sql.ts';

/** What the endpoint service needs besides the database: the receivers' resolver, the loopback flag and the clock. */
export type EndpointDeps = Pick<Deps, 'resolver' | 'config' | 'clock'>;

/** How long a replaced secret is still signed with (second Standard Webhooks signature), so receivers can roll over. */
export const SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

const toView = (r: q.EndpointRow): WebhookEndpointView => ({
  id: r.id,
  url: r.url,
  events: shownEvents(r.events),
  description: r.description,
  filter: r.filter,
  enabled: r.enabled,
  disabledReason: r.disabled_reason,
  failureCount: r.failure_count,
  secret: r.secret,
  previousSecretExpiresAt: isoOrNull(r.previous_secret_expires_at),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

/** Webhook endpoints carry signing secrets: owners and admins only (docs/application.md). */
const manage = (actor: InternalActor) => requireRole(actor, 'owner', 'admin');
const notFound = (id: string) => errors.notFound(`No webhook endpoint with id ${id}`);

/**
 * Why `url` may not receive deliveries (a private or internal address, or a host that does not resolve), or null. Run
 * outside any transaction: resolving a host can take a while and must not hold row locks.
 */
async function unsafeReason(deps: EndpointDeps, url: string): Promise<string | null> {
  const check = await checkUrlAddress(url, { resolver: deps.resolver, allowLoopback: deps.config.WEBHOOKS_UNSAFE_ALLOW_LOOPBACK });
  return check.ok ? null : check.reason;
}

async function find(db: Db, actor: InternalActor, id: string): Promise<q.EndpointRow> {
  const [row] = await db.run(q.GET, { id, orgId: actor.orgId });
  if (!row) throw notFound(id);
  return row;
}

export async function listEndpoints(db: Db, actor: InternalActor, input: WebhookEndpointListInput) {
  manage(actor);
  const cursor = input.cursor ?? null;
  const rows = await db.run(q.LIST, { orgId: actor.orgId, cursor, limit: input.limit + 1 });
  await refuseForeignCursor(db, 'webhook_endpoints', { orgId: actor.orgId, cursor }, rows);
  return toPage(rows, input.limit, toView);
}

export async function getEndpoint(db: Db, actor: InternalActor, id: string): Promise<WebhookEndpointView> {
  manage(actor);
  return toView(await find(db, actor, id));
}

/**
 * Creates the endpoint with a new secret. A URL that points at a private or internal address, or whose host does not
 * resolve, still creates it, disabled, with the reason: the owner sees why and enables it once the URL is fixed.
 */
export async function createEndpoint(
  db: Db,
  deps: EndpointDeps,
  actor: InternalActor,
  input: WebhookEndpointCreateInput,
): Promise<WebhookEndpointView> {
  manage(actor);
  const reason = await unsafeReason(deps, input.url);
  const now = deps.clock.now();
  const [row] = await db.run(q.INSERT, {
    id: randomUUID(),
    orgId: actor.orgId,
    url: input.url,
    events: storedEvents(input.events),
    description: input.description || null,
    filter: input.filter ? JSON.stringify(input.filter) : null,
    enabled: reason === null,
    disabledReason: reason,
    secret: newSigningSecret(),
    createdBy: actor.userId,
    now,
  });
  return toView(row!);
}

/**
 * URL, events, description and filter. A changed URL is checked again; an unsafe one disables the endpoint with the reason (and
 * `webhook.endpoint_disabled`, when it was enabled).
 */
export async function updateEndpoint(
  db: Db,
  deps: EndpointDeps,
  actor: InternalActor,
  input: WebhookEndpointUpdateInput,
): Promise<WebhookEndpointView> {
  manage(actor);
  const current = await find(db, actor, input.id);
  const urlChanged = input.url !== undefined && input.url !== current.url;
  const reason = urlChanged ? await unsafeReason(deps, input.url!) : null;
  const now = deps.clock.now();
  const row = await db.transaction(async (tx) => {
    // Only an unsafe URL can disable it: then whether it was enabled decides `webhook.endpoint_disabled`.
    const [before] = reason ? await tx.run(q.LOCK, { id: input.id, orgId: actor.orgId }) : [];
    const [updated] = await tx.run(q.UPDATE, {
      url: urlChanged ? input.url! : null,
      urlChanged,
      events: input.events ? storedEvents(input.events) : null,
      descriptionSent: input.description !== undefined,
      description: input.description || null,
      filterSent: input.filter !== undefined,
      filter: input.filter ? JSON.stringify(input.filter) : null,
      unsafeReason: reason,
      now,
      id: input.id,
      orgId: actor.orgId,
    });
    if (updated && reason && before?.enabled)
      await emitEvents(tx, [
        endpointDisabled({ orgId: actor.orgId, id: updated.id, url: updated.url }, reason, updated.failure_count, now),
      ]);
    return updated;
  });
  if (!row) throw notFound(input.id);
  return toView(row);
}

export async function deleteEndpoint(db: Db, actor: InternalActor, id: string): Promise<void> {
  manage(actor);
  const [row] = await db.run(q.DELETE, { id, orgId: actor.orgId });
  if (!row) throw notFound(id);
}

/** Refused while the URL still points somewhere deliveries may not go; nothing changes then. */
export const urlRefused = (reason: string) =>
  new AppError('webhook_url_refused', `The endpoint stays disabled: ${reason}. Change its URL, then enable it again`, { reason });

/**
 * Turns the endpoint back on after checking its URL again, resetting the failure count and the reason. The update
 * only applies to the URL that was checked; if a concurrent change replaced it, the new URL is checked in turn.
 */
export async function enableEndpoint(db: Db, deps: EndpointDeps, actor: InternalActor, id: string): Promise<WebhookEndpointView> {
  manage(actor);
  for (let tries = 0; tries < 3; tries++) {
    const { url } = await find(db, actor, id);
    const reason = await unsafeReason(deps, url);
    if (reason) throw urlRefused(reason);
    const now = deps.clock.now();
    const row = await db.transaction(async (tx) => {
      const [before] = await tx.run(q.LOCK, { id, orgId: actor.orgId });
      const [enabled] = await tx.run(q.ENABLE, { now, id, orgId: actor.orgId, url });
      if (enabled && before && !before.enabled) await emitEvents(tx, [endpointEnabled({ orgId: actor.orgId, id, url }, actor.userId, now)]);
      return enabled;
    });
    if (row) return toView(row);
  }
  throw new AppError('concurrent_update', 'The endpoint URL kept changing while it was being enabled; try again');
}

/**
 * Stops deliveries, with `webhook.endpoint_disabled`; the reason names who did it. Disabling a disabled endpoint changes
 * nothing (its reason stays, no event).
 */
export async function disableEndpoint(db: Db, deps: EndpointDeps, actor: InternalActor, id: string): Promise<WebhookEndpointView> {
  manage(actor);
  const now = deps.clock.now();
  const row = await db.transaction(async (tx) => {
    const [disabled] = await tx.run(q.DISABLE, { userId: actor.userId, orgId: actor.orgId, now, id });
    if (disabled) {
      const endpoint = { orgId: actor.orgId, id, url: disabled.url };
      await emitEvents(tx, [endpointDisabled(endpoint, disabled.disabled_reason ?? 'disabled by a user', disabled.failure_count, now)]);
    }
    return disabled;
  });
  return row ? toView(row) : getEndpoint(db, actor, id);
}

/**
 * A new secret at once; the replaced one stays in `previous_secret` for 24 hours, during which every delivery carries a
 * second Standard Webhooks signature made with it, so a receiver can switch without rejecting anything.
 */
export async function rotateSecret(db: Db, deps: EndpointDeps, actor: InternalActor, id: string) {
  manage(actor);
  const now = deps.clock.now();
  const expires = new Date(now.getTime() + SECRET_GRACE_MS);
  const [row] = await db.run(q.ROTATE, { expires, secret: newSigningSecret(), now, id, orgId: actor.orgId });
  if (!row) throw notFound(id);
  return { secret: row.secret, previousSecretExpiresAt: iso(expires) };
}

/**
 * Every `*` endpoint's column brought to this version's catalogue (`storedEvents`), at start: a type added by an upgrade
 * is delivered to them from the first event of it. Touches only the rows whose list differs (after an upgrade).
 */
export async function refreshWildcards(db: Db): Promise<number> {
  return (await db.run(q.REFRESH_WILDCARDS, { events: storedEvents(['*']) })).length;
}
