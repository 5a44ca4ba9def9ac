import { qb, sql, statement } from '@leadwire/db';
import { newestFirst } from '../../records/pagination.ts';

/** Statements of the endpoint service. Every one is scoped to the organization and to kind 'endpoint' (REST hooks of
 * automation platforms share the table and are managed through their own routes). */

/** What the endpoint screen shows: every statement answers with these columns. */
const SHOWN = [
  'id',
  'url',
  'events',
  'description',
  'filter',
  'enabled',
  'disabled_reason',
  'failure_count',
  'secret',
  'previous_secret_expires_at',
  'created_at',
  'updated_at',
] as const;

/** A literal, as the SQL always had it, rather than a parameter: the kind is fixed, not the caller's. */
const ENDPOINT = sql.lit('endpoint' as const);

export const GET = statement<{ id: string; orgId: string }>()((p) =>
  qb
    .selectFrom('webhook_endpoints')
    .select(SHOWN)
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', ENDPOINT),
);

export type EndpointRow = NonNullable<(typeof GET)['row']>;

/** Keyset pagination over (created_at, id), newest first; the cursor is the last id of the previous page (records/pagination.ts). */
export const LIST = statement<{ orgId: string; cursor: string | null; limit: number }>()((p) =>
  newestFirst(
    qb.selectFrom('webhook_endpoints as w').select(SHOWN).where('w.organization_id', '=', p.orgId).where('w.kind', '=', ENDPOINT),
    'webhook_endpoints',
    'w',
    p,
  ),
);

/** `enabled` and `disabled_reason` come from the address check made just before. */
export const INSERT = statement<{
  id: string;
  orgId: string;
  url: string;
  events: string[];
  description: string | null;
  /** The filter as JSON text, or null. */
  filter: string | null;
  enabled: boolean;
  disabledReason: string | null;
  secret: string;
  createdBy: string;
  now: Date;
}>()((p) =>
  qb
    .insertInto('webhook_endpoints')
    .values({
      id: p.id,
      organization_id: p.orgId,
      kind: ENDPOINT,
      url: p.url,
      events: sql<string[]>`${p.events}::text[]`,
      description: p.description,
      filter: sql<Record<string, unknown> | null>`${p.filter}::jsonb`,
      enabled: p.enabled,
      disabled_reason: p.disabledReason,
      failure_count: sql.lit(0),
      secret: p.secret,
      created_by_id: p.createdBy,
      created_at: p.now,
      updated_at: p.now,
    })
    .returning(SHOWN),
);

/**
 * A new URL resets the failure count (the old receiver's failures say nothing about the new one); an unsafe one
 * disables the endpoint, a safe one leaves `enabled` as it is, so that turning an endpoint back on stays an explicit act
 * (spec: "owner turns it back on"). Computed in SQL so that a concurrent disable or failure is never overwritten with a
 * stale value. `url` and `events` null: unchanged; `filter` is replaced (null clears it) only when sent.
 */
export const UPDATE = statement<{
  url: string | null;
  urlChanged: boolean;
  events: string[] | null;
  descriptionSent: boolean;
  description: string | null;
  filterSent: boolean;
  filter: string | null;
  unsafeReason: string | null;
  now: Date;
  id: string;
  orgId: string;
}>()((p) =>
  qb
    .updateTable('webhook_endpoints')
    .set((eb) => ({
      url: eb.fn.coalesce(eb.val(p.url), eb.ref('url')),
      failure_count: eb.case().when(sql<boolean>`${p.urlChanged}::boolean`).then(sql.lit(0)).else(eb.ref('failure_count')).end(),
      events: eb.fn.coalesce(sql<string[] | null>`${p.events}::text[]`, eb.ref('events')),
      description: eb
        .case()
        .when(sql<boolean>`${p.descriptionSent}::boolean`)
        .then(eb.val(p.description))
        .else(eb.ref('description'))
        .end(),
      filter: eb
        .case()
        .when(sql<boolean>`${p.filterSent}::boolean`)
        .then(sql<Record<string, unknown> | null>`${p.filter}::jsonb`)
        .else(eb.ref('filter'))
        .end(),
      enabled: eb.case().when(sql<boolean>`${p.unsafeReason}::text is null`).then(eb.ref('enabled')).else(sql.lit(false)).end(),
      disabled_reason: eb.fn.coalesce(eb.val(p.unsafeReason), eb.ref('disabled_reason')),
      updated_at: p.now,
    }))
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', ENDPOINT)
    .returning(SHOWN),
);

/** Only while the URL is still the one that was checked (a concurrent PATCH may have changed it). */
/** Whether the endpoint is enabled, its row held until the transaction ends: enabling tells `webhook.endpoint_enabled` once. */
export const LOCK = statement<{ id: string; orgId: string }>()((p) =>
  qb
    .selectFrom('webhook_endpoints')
    .select('enabled')
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', ENDPOINT)
    .forUpdate(),
);

export const ENABLE = statement<{ now: Date; id: string; orgId: string; url: string }>()((p) =>
  qb
    .updateTable('webhook_endpoints')
    .set({ enabled: sql.lit(true), disabled_reason: null, failure_count: sql.lit(0), updated_at: p.now })
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', ENDPOINT)
    .where('url', '=', p.url)
    .returning(SHOWN),
);

/** An endpoint already disabled keeps the reason it was disabled for (e.g. 10 failures in a row). */
export const DISABLE = statement<{ userId: string; orgId: string; now: Date; id: string }>()((p) =>
  qb
    .updateTable('webhook_endpoints')
    .set((eb) => ({
      enabled: sql.lit(false),
      disabled_reason: sql<string>`'disabled by ' || ${eb.fn.coalesce(
        eb.selectFrom('users as u').select('u.email').where('u.id', '=', p.userId).where('u.organization_id', '=', p.orgId),
        sql.lit('a user'),
      )}`,
      updated_at: p.now,
    }))
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', ENDPOINT)
    .where((eb) => eb.ref('enabled'))
    .returning(SHOWN),
);

/** The replaced secret is kept for the grace period; a second rotation within it drops the oldest. */
export const ROTATE = statement<{ expires: Date; secret: string; now: Date; id: string; orgId: string }>()((p) =>
  qb
    .updateTable('webhook_endpoints')
    .set((eb) => ({ previous_secret: eb.ref('secret'), previous_secret_expires_at: p.expires, secret: p.secret, updated_at: p.now }))
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', ENDPOINT)
    .returning(SHOWN),
);

export const DELETE = statement<{ id: string; orgId: string }>()((p) =>
  qb
    .deleteFrom('webhook_endpoints')
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', ENDPOINT)
    .returning('id'),
);

/** `*` endpoints whose names are not this version's catalogue (endpoints/schemas.ts, storedEvents). */
export const REFRESH_WILDCARDS = statement<{ events: string[] }>()((p) =>
  qb
    .updateTable('webhook_endpoints')
    .set({ events: sql<string[]>`${p.events}::text[]` })
    .where(sql<boolean>`events[1] = '*'`)
    .where(sql<boolean>`events <> ${p.events}::text[]`)
    .returning('id'),
);

/** The workspace's newest events, the feed's index read backwards (the filter preview, preview.ts). */
export const RECENT_EVENTS = statement<{ orgId: string; scan: number }>()((p) =>
  qb
    .selectFrom('outbox_events')
    .select(['id', 'event', 'payload'])
    .where('organization_id', '=', p.orgId)
    .orderBy('txid', 'desc')
    .orderBy('seq', 'desc')
    .limit(p.scan),
);
