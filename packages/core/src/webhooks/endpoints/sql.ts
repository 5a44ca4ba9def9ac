import { columnList } from '@leadwire/db';
import { afterCursor } from '../../records/pagination.ts';

/** Statements of the endpoint service. Every one is scoped to the organization and to kind 'endpoint' (REST hooks of
 * automation platforms share the table and are managed through their own routes). */

export interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  failure_count: number;
  secret: string;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = [
  'id', 'url', 'events', 'description', 'enabled', 'disabled_reason', 'failure_count', 'secret', 'previous_secret_expires_at', 'created_at', 'updated_at',
];
const RETURNING = `returning ${columnList(COLUMNS)}`;
const MINE = `organization_id = ? and kind = 'endpoint'`;

export const GET = `select ${columnList(COLUMNS)} from webhook_endpoints where id = ? and ${MINE}`;

export const LIST = `
select ${columnList(COLUMNS, 'w')} from webhook_endpoints w
where w.organization_id = ? and w.kind = 'endpoint' and ${afterCursor('w', 'webhook_endpoints')}
order by w.created_at desc, w.id desc
limit ?`;

/** `enabled` and `disabled_reason` come from the address check made just before. */
export const INSERT = `
insert into webhook_endpoints (id, organization_id, kind, url, events, description, enabled, disabled_reason, failure_count, secret, created_by_id, created_at, updated_at)
values (?, ?, 'endpoint', ?, ?::text[], ?, ?, ?, 0, ?, ?, ?, ?)
${RETURNING}`;

/**
 * Binds (url?, urlChanged, events?, descriptionSent, description, unsafeReason?, now, id, orgId). A new URL resets the
 * failure count (the old receiver's failures say nothing about the new one); an unsafe one disables the endpoint, a
 * safe one leaves `enabled` as it is, so that turning an endpoint back on stays an explicit act (spec: "owner turns it
 * back on"). Computed in SQL so that a concurrent disable or failure is never overwritten with a stale value.
 */
export const UPDATE = `
update webhook_endpoints set
  url = coalesce(?, url),
  failure_count = case when ?::boolean then 0 else failure_count end,
  events = coalesce(?::text[], events),
  description = case when ?::boolean then ? else description end,
  enabled = case when ?::text is null then enabled else false end,
  disabled_reason = coalesce(?, disabled_reason),
  updated_at = ?
where id = ? and ${MINE}
${RETURNING}`;

/** Only while the URL is still the one that was checked (a concurrent PATCH may have changed it). */
export const ENABLE = `
update webhook_endpoints set enabled = true, disabled_reason = null, failure_count = 0, updated_at = ?
where id = ? and ${MINE} and url = ?
${RETURNING}`;

/** An endpoint already disabled keeps the reason it was disabled for (e.g. 10 failures in a row). */
export const DISABLE = `
update webhook_endpoints set
  enabled = false,
  disabled_reason = 'disabled by ' || coalesce((select u.email from users u where u.id = ? and u.organization_id = ?), 'a user'),
  updated_at = ?
where id = ? and ${MINE} and enabled
${RETURNING}`;

/** The replaced secret is kept for the grace period; a second rotation within it drops the oldest. */
export const ROTATE = `
update webhook_endpoints set previous_secret = secret, previous_secret_expires_at = ?, secret = ?, updated_at = ?
where id = ? and ${MINE}
${RETURNING}`;

export const DELETE = `delete from webhook_endpoints where id = ? and ${MINE} returning id`;
