import { qb, sql, statement } from '@leadwire/db';

/** Statements of the messages service, in one place. */

/** `for share` holds consent and phone steady until the queued message is written. */
export const CONTACT_FOR_SMS = statement<{ id: string; orgId: string }>()((p) =>
  qb
    .selectFrom('contacts')
    .select(['id', 'phone', 'sms_consent', 'first_name', 'email'])
    .where('id', '=', p.id)
    .where('organization_id', '=', p.orgId)
    .where('deleted_at', 'is', null)
    .forShare(),
);

/** The oldest live contact with the sender's digits wins, as with upsert matching. */
export const CONTACT_BY_PHONE = statement<{ orgId: string; digits: string }>()((p) =>
  qb
    .selectFrom('contacts')
    .select(['id', 'first_name', 'email'])
    .where('organization_id', '=', p.orgId)
    .where('deleted_at', 'is', null)
    .where('phone', 'is not', null)
    .where((eb) => eb(sql<string>`regexp_replace(${eb.ref('phone')}, '[^0-9]', '', 'g')`, '=', p.digits))
    .orderBy('created_at')
    .orderBy('id')
    .limit(sql.lit(1)),
);
export type ContactRef = NonNullable<(typeof CONTACT_BY_PHONE)['row']>;

/** One conversation per contact and channel; `created` tells the first message apart. */
export const UPSERT_CONVERSATION = statement<{ id: string; orgId: string; contactId: string; now: Date }>()((p) =>
  qb
    .insertInto('conversations')
    .values({ id: p.id, organization_id: p.orgId, contact_id: p.contactId, channel: sql.lit('sms'), last_message_at: p.now })
    .onConflict((oc) =>
      oc.columns(['contact_id', 'channel']).doUpdateSet((eb) => ({ last_message_at: eb.ref('excluded.last_message_at') })),
    )
    .returning(['id', sql<boolean>`(xmax = 0)`.as('created')]),
);

const MESSAGE_COLUMNS = [
  'id',
  'conversation_id',
  'contact_id',
  'direction',
  'channel',
  'from_address',
  'to_address',
  'body',
  'status',
  'provider_message_id',
  'created_at',
] as const;

export const INSERT_MESSAGE = statement<{
  id: string;
  orgId: string;
  conversationId: string;
  contactId: string;
  direction: 'inbound' | 'outbound';
  from: string;
  to: string;
  body: string;
  status: 'queued' | 'received';
  providerMessageId: string | null;
  now: Date;
}>()((p) =>
  qb
    .insertInto('messages')
    .values({
      id: p.id,
      organization_id: p.orgId,
      conversation_id: p.conversationId,
      contact_id: p.contactId,
      direction: p.direction,
      channel: sql.lit('sms'),
      from_address: p.from,
      to_address: p.to,
      body: p.body,
      status: p.status,
      provider_message_id: p.providerMessageId,
      created_at: p.now,
    })
    .returning(MESSAGE_COLUMNS),
);
export type MessageRow = NonNullable<(typeof INSERT_MESSAGE)['row']>;

export const SET_MESSAGE_STATUS = statement<{ id: string; status: 'sent' | 'failed'; providerMessageId: string | null }>()((p) =>
  qb
    .updateTable('messages')
    .set({ status: p.status, provider_message_id: p.providerMessageId })
    .where('id', '=', p.id)
    .returning(MESSAGE_COLUMNS),
);

/** Scoped by contact so the lookup rides the contact index (messages has none on provider_message_id). */
export const FIND_INBOUND_BY_PROVIDER_ID = statement<{ contactId: string; providerMessageId: string }>()((p) =>
  qb
    .selectFrom('messages')
    .select(['id', 'conversation_id'])
    .where('contact_id', '=', p.contactId)
    .where('direction', '=', sql.lit('inbound'))
    .where('provider_message_id', '=', p.providerMessageId)
    .limit(sql.lit(1)),
);

/** Serialises re-deliveries of one provider message, which may arrive concurrently. */
export const LOCK_PROVIDER_MESSAGE = statement<{ key: string }>()((p) =>
  qb.selectNoFrom(sql<unknown>`pg_advisory_xact_lock(hashtextextended(${p.key}, 0))`.as('locked')),
);

export const ORG_EXISTS = statement<{ id: string }>()((p) =>
  qb.selectFrom('organizations').select(sql<number>`1`.as('ok')).where('id', '=', p.id),
);

export const CONVERSATION_OF_CONTACT = statement<{ contactId: string; orgId: string }>()((p) =>
  qb
    .selectFrom('conversations as cv')
    .innerJoin('contacts as c', 'c.id', 'cv.contact_id')
    .select('cv.id')
    .where('cv.contact_id', '=', p.contactId)
    .where('cv.organization_id', '=', p.orgId)
    .where('cv.channel', '=', sql.lit('sms'))
    .where('c.deleted_at', 'is', null),
);

export const LIVE_CONTACT = statement<{ id: string; orgId: string }>()((p) =>
  qb.selectFrom('contacts').select('id').where('id', '=', p.id).where('organization_id', '=', p.orgId).where('deleted_at', 'is', null),
);

export const LATEST_MESSAGES = statement<{ conversationId: string; limit: number }>()((p) =>
  qb
    .selectFrom((eb) =>
      eb
        .selectFrom('messages')
        .select(MESSAGE_COLUMNS)
        .where('conversation_id', '=', p.conversationId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(p.limit)
        .as('m'),
    )
    .select(MESSAGE_COLUMNS)
    .orderBy('created_at')
    .orderBy('id'),
);
