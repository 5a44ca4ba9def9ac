import { qb, sql, statement } from '@leadwire/db';

/**
 * Statements of the automation-platform integration, each built once. REST hooks are rows of webhook_endpoints with
 * kind 'rest_hook' and one event; every statement names the organization, so a foreign id behaves exactly like an
 * unknown one.
 */

const HOOK_COLUMNS = ['id', 'url', 'events', 'enabled', 'disabled_reason', 'secret', 'api_key_id', 'created_at'] as const;
const REST_HOOK = sql.lit('rest_hook' as const);
/** A hook's one event, as the `events` array it is stored as. */
const eventsOf = (event: unknown) => sql<string[]>`array[${event}]::text[]`;

/** Serialises subscriptions of one (organization, trigger, URL), so a platform's retry cannot create a twin. */
export const LOCK_SUBSCRIPTION = statement<{ key: string }>()((p) =>
  qb.selectNoFrom(sql<unknown>`pg_advisory_xact_lock(hashtextextended(${p.key}, 0))`.as('locked')),
);

export const FIND_HOOK = statement<{ orgId: string; url: string; event: string }>()((p) =>
  qb
    .selectFrom('webhook_endpoints')
    .select(HOOK_COLUMNS)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', REST_HOOK)
    .where('url', '=', p.url)
    .where('events', '=', eventsOf(p.event))
    .orderBy('created_at')
    .orderBy('id')
    .limit(sql.lit(1)),
);

export const INSERT_HOOK = statement<{
  id: string;
  orgId: string;
  url: string;
  event: string;
  enabled: boolean;
  disabledReason: string | null;
  secret: string;
  userId: string;
  apiKeyId: string | null;
  now: Date;
}>()((p) =>
  qb
    .insertInto('webhook_endpoints')
    .values({
      id: p.id,
      organization_id: p.orgId,
      kind: REST_HOOK,
      url: p.url,
      events: eventsOf(p.event),
      enabled: p.enabled,
      disabled_reason: p.disabledReason,
      secret: p.secret,
      created_by_id: p.userId,
      api_key_id: p.apiKeyId,
      created_at: p.now,
      updated_at: p.now,
    })
    .returning(HOOK_COLUMNS),
);

export const GET_HOOK = statement<{ id: string; orgId: string }>()((p) =>
  qb
    .selectFrom('webhook_endpoints')
    .select(HOOK_COLUMNS)
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', REST_HOOK),
);

/** A REST hook as the statements above return it. */
export type HookRow = NonNullable<(typeof GET_HOOK)['row']>;

/** Deliveries and their attempts go with the hook (foreign keys cascade). */
export const DELETE_HOOK = statement<{ id: string; orgId: string }>()((p) =>
  qb
    .deleteFrom('webhook_endpoints')
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .where('kind', '=', REST_HOOK)
    .returning('id'),
);

export const ME = statement<{ userId: string; orgId: string }>()((p) =>
  qb
    .selectFrom('users as u')
    .innerJoin('organizations as o', 'o.id', 'u.organization_id')
    .select(['o.id as organization_id', 'o.name as organization_name', 'u.id as user_id', 'u.email', 'u.name as user_name'])
    .where('u.id', '=', p.userId)
    .where('o.id', '=', p.orgId),
);

/**
 * The organization's latest events of one kind, newest first in feed order ((txid, seq) descending). The inner query
 * walks outbox_events_feed_idx backwards over the organization's newest `scan` events only, whatever their kind, and
 * the outer one keeps those of `event`: a poll costs at most `scan` index entries and rows, however many events the
 * organization holds or however rare the kind is. Payloads are read only for the rows returned.
 */
export const RECENT_EVENTS = statement<{ orgId: string; event: string; scan: number; limit: number }>()((p) =>
  qb
    .selectFrom((db) =>
      db
        .selectFrom('outbox_events')
        .select(['id', 'event', 'payload', 'txid', 'seq'])
        .where('organization_id', '=', p.orgId)
        .orderBy('txid', 'desc')
        .orderBy('seq', 'desc')
        .limit(p.scan)
        .as('w'),
    )
    .select(['w.id', 'w.payload'])
    .where('w.event', '=', p.event)
    .orderBy('w.txid', 'desc')
    .orderBy('w.seq', 'desc')
    .limit(p.limit),
);

export const LIVE_CONTACT_BY_EMAIL = statement<{ orgId: string; email: string }>()((p) =>
  qb
    .selectFrom('contacts')
    .select('id')
    .where('organization_id', '=', p.orgId)
    .where('email', '=', p.email)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(sql.lit(1)),
);

export const COMPANY_BY_DOMAIN = statement<{ orgId: string; domain: string }>()((p) =>
  qb.selectFrom('companies').select('id').where('organization_id', '=', p.orgId).where('domain', '=', p.domain),
);
