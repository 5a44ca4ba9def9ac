import { columnList } from '@leadwire/db';

/**
 * Statements of the automation-platform integration. REST hooks are rows of webhook_endpoints with kind 'rest_hook'
 * and one event; every statement names the organization, so a foreign id behaves exactly like an unknown one.
 */

const HOOK_COLUMNS = ['id', 'url', 'events', 'enabled', 'disabled_reason', 'secret', 'api_key_id', 'created_at'];

export interface HookRow {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  secret: string;
  api_key_id: string | null;
  created_at: Date;
}

/** Serialises subscriptions of one (organization, trigger, URL), so a platform's retry cannot create a twin. */
export const LOCK_SUBSCRIPTION = `select pg_advisory_xact_lock(hashtextextended(?, 0))`;

export const FIND_HOOK = `
select ${columnList(HOOK_COLUMNS)} from webhook_endpoints
where organization_id = ? and kind = 'rest_hook' and url = ? and events = array[?]::text[]
order by created_at, id
limit 1`;

export const INSERT_HOOK = `
insert into webhook_endpoints (id, organization_id, kind, url, events, enabled, disabled_reason, secret, created_by_id, api_key_id,
  created_at, updated_at)
values (?, ?, 'rest_hook', ?, array[?]::text[], ?, ?, ?, ?, ?, ?, ?)
returning ${columnList(HOOK_COLUMNS)}`;

export const GET_HOOK = `
select ${columnList(HOOK_COLUMNS)} from webhook_endpoints where id = ? and organization_id = ? and kind = 'rest_hook'`;

/** Deliveries and their attempts go with the hook (foreign keys cascade). */
export const DELETE_HOOK = `delete from webhook_endpoints where id = ? and organization_id = ? and kind = 'rest_hook' returning id`;

export const ME = `
select o.id as organization_id, o.name as organization_name, u.id as user_id, u.email, u.name as user_name
from users u join organizations o on o.id = u.organization_id
where u.id = ? and o.id = ?`;

/** The organization's latest payloads of one event, as they were (or will be) delivered. */
export const RECENT_PAYLOADS = `
select payload from outbox_events
where organization_id = ? and event = ?
order by created_at desc, id desc
limit ?`;

export const LIVE_CONTACT_BY_EMAIL = `
select id from contacts where organization_id = ? and email = ? and deleted_at is null order by created_at, id limit 1`;

export const COMPANY_BY_DOMAIN = `select id from companies where organization_id = ? and domain = ?`;
