/** Statements of the messages service, in one place. */

/** `for share` holds consent and phone steady until the queued message is written. */
export const CONTACT_FOR_SMS = `
select id, phone, sms_consent, first_name, email from contacts
where id = ? and organization_id = ? and deleted_at is null
for share`;

/** The oldest live contact with the sender's digits wins, as with upsert matching. */
export const CONTACT_BY_PHONE = `
select id, first_name, email from contacts
where organization_id = ? and deleted_at is null and phone is not null
  and regexp_replace(phone, '[^0-9]', '', 'g') = ?
order by created_at, id
limit 1`;

/** One conversation per contact and channel; `created` tells the first message apart. */
export const UPSERT_CONVERSATION = `
insert into conversations (id, organization_id, contact_id, channel, last_message_at)
values (?, ?, ?, 'sms', ?)
on conflict (contact_id, channel) do update set last_message_at = excluded.last_message_at
returning id, (xmax = 0) as created`;

const MESSAGE_COLUMNS = `id, conversation_id, contact_id, direction, channel, from_address, to_address, body, status,
  provider_message_id, created_at`;

export const INSERT_MESSAGE = `
insert into messages (id, organization_id, conversation_id, contact_id, direction, channel, from_address, to_address, body,
  status, provider_message_id, created_at)
values (?, ?, ?, ?, ?, 'sms', ?, ?, ?, ?, ?, ?)
returning ${MESSAGE_COLUMNS}`;

export const SET_MESSAGE_STATUS = `
update messages set status = ?, provider_message_id = ? where id = ?
returning ${MESSAGE_COLUMNS}`;

/** Scoped by contact so the lookup rides the contact index (messages has none on provider_message_id). */
export const FIND_INBOUND_BY_PROVIDER_ID = `
select id, conversation_id from messages
where contact_id = ? and direction = 'inbound' and provider_message_id = ?
limit 1`;

/** Serialises re-deliveries of one provider message, which may arrive concurrently. */
export const LOCK_PROVIDER_MESSAGE = `select pg_advisory_xact_lock(hashtextextended(?, 0))`;

export const ORG_EXISTS = `select 1 as ok from organizations where id = ?`;

export const CONVERSATION_OF_CONTACT = `
select cv.id from conversations cv
join contacts c on c.id = cv.contact_id
where cv.contact_id = ? and cv.organization_id = ? and cv.channel = 'sms' and c.deleted_at is null`;

export const LIVE_CONTACT = `select id from contacts where id = ? and organization_id = ? and deleted_at is null`;

export const LATEST_MESSAGES = `
select ${MESSAGE_COLUMNS} from (
  select ${MESSAGE_COLUMNS} from messages where conversation_id = ? order by created_at desc, id desc limit ?
) m order by created_at, id`;

export interface MessageRow {
  id: string;
  conversation_id: string;
  contact_id: string;
  direction: 'inbound' | 'outbound';
  channel: string;
  from_address: string;
  to_address: string;
  body: string;
  status: 'queued' | 'sent' | 'failed' | 'received';
  provider_message_id: string | null;
  created_at: Date | string;
}
