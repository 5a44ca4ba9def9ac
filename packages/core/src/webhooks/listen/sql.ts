/**
 * Statements of `leadwire listen`. The outbox trigger (migration Migration20261123100000) notifies only
 * for organizations that have a row in webhook_listeners, so these rows are what turns the stream on and off.
 */

/** The person's listen secret, created on first use; the no-op update makes `returning` give the stored one. */
export const LISTEN_SECRET = `
insert into webhook_listen_secrets (organization_id, user_id, secret) values (?, ?, ?)
on conflict (organization_id, user_id) do update set organization_id = excluded.organization_id
returning secret`;

export const UPSERT_LISTENER = `
insert into webhook_listeners (organization_id, process_key, expires_at) values (?, ?, ?)
on conflict (organization_id, process_key) do update set expires_at = excluded.expires_at`;

export const DELETE_LISTENER = `delete from webhook_listeners where organization_id = ? and process_key = ?`;

export const REFRESH_LISTENERS = `update webhook_listeners set expires_at = ? where process_key = ?`;

export const DELETE_PROCESS_LISTENERS = `delete from webhook_listeners where process_key = ?`;

/** Rows of processes that died without removing theirs: they would keep the trigger notifying for nobody. */
export const DELETE_EXPIRED_LISTENERS = `delete from webhook_listeners where expires_at < ?`;

export const ANY_LISTENER = `select exists (select 1 from webhook_listeners where organization_id = ?) as listening`;

/** The events a notification names, in the order they were written. */
export const EVENTS_BY_ID = `
select id, organization_id, event, payload from outbox_events
where id = any(?::uuid[]) and organization_id = ?
order by created_at, id`;

export const NOTIFY = `select pg_notify(?, ?)`;
