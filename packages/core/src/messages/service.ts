import { randomUUID } from 'node:crypto';
import type { Db } from '@leadwire/db';
import type { InternalActor } from '../auth/actor.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../context.ts';
import { AppError, errors } from '../errors.ts';
import { emitEvents, type EventSource, type PendingEvent } from '../events/outbox.ts';
import { phoneDigits } from './phone.ts';
import type { SmsProvider } from './provider.ts';
import type { InboundSmsInput, InboundSmsOutput, ListMessagesInput, MessageView, SendSmsInput } from './schemas.ts';
import * as q from './sql.ts';
import { planOwnLinks, saveTrackedLinks } from '../tracking/links.ts';

export const messageErrors = {
  consentRequired: () =>
    new AppError('sms_consent_required', 'This contact has not consented to SMS; record their consent before texting them'),
  noPhone: () => new AppError('contact_has_no_phone', 'This contact has no phone number to text'),
};

export function toMessageView(r: q.MessageRow): MessageView {
  return {
    id: r.id,
    conversationId: r.conversation_id,
    contactId: r.contact_id,
    direction: r.direction,
    channel: r.channel,
    from: r.from_address,
    to: r.to_address,
    body: r.body,
    status: r.status,
    providerMessageId: r.provider_message_id,
    createdAt: new Date(r.created_at).toISOString(),
  };
}

const contactData = (c: q.ContactRef) => ({ id: c.id, firstName: c.first_name, email: c.email });

function conversationCreated(orgId: string, source: EventSource, conversationId: string, c: q.ContactRef, at: Date): PendingEvent {
  return {
    orgId,
    event: 'conversation.created',
    source,
    data: { conversation: { id: conversationId, contactId: c.id, channel: 'sms' }, contact: contactData(c) },
    at,
  };
}

async function openConversation(tx: Db, orgId: string, contactId: string, now: Date) {
  const [row] = await tx.run(q.UPSERT_CONVERSATION, { id: randomUUID(), orgId, contactId, now });
  if (!row) throw new Error('conversation upsert returned no row');
  return row;
}

/**
 * Texts a contact who consented and has a phone; otherwise refuses and stores nothing. The message is stored as
 * `queued` before the provider is called, so a text that left is never without its record; the provider's answer
 * then makes it `sent` (with message.sent) or `failed`. The provider is called outside any transaction. With
 * `linkBase` ({base_url}), links to the organization's own site become tracked links (tracking/links.ts), and the
 * text is stored and sent rewritten.
 */
export async function sendSms(
  db: Db,
  actor: InternalActor,
  deps: { provider: SmsProvider; from: string; log: Logger; clock: Clock; linkBase?: string },
  input: SendSmsInput,
): Promise<MessageView> {
  const queuedAt = deps.clock.now();
  const queued = await db.transaction(async (tx) => {
    const [contact] = await tx.run(q.CONTACT_FOR_SMS, { id: input.contactId, orgId: actor.orgId });
    if (!contact) throw errors.notFound(`No contact with id ${input.contactId}`);
    if (!contact.sms_consent) throw messageErrors.consentRequired();
    const to = contact.phone?.trim();
    if (!to) throw messageErrors.noPhone();
    const conversation = await openConversation(tx, actor.orgId, contact.id, queuedAt);
    const out = deps.linkBase ? await planOwnLinks(tx, actor.orgId, input.body, deps.linkBase) : { body: input.body, links: [] };
    const [message] = await tx.run(q.INSERT_MESSAGE, {
      id: randomUUID(),
      orgId: actor.orgId,
      conversationId: conversation.id,
      contactId: contact.id,
      direction: 'outbound',
      from: deps.from,
      to,
      body: out.body,
      status: 'queued',
      providerMessageId: null,
      now: queuedAt,
    });
    await saveTrackedLinks(tx, { orgId: actor.orgId, contactId: contact.id, messageId: message!.id, at: queuedAt }, out.links);
    if (conversation.created)
      await emitEvents(tx, [conversationCreated(actor.orgId, actor.eventSource ?? 'app', conversation.id, contact, queuedAt)]);
    return { message: message!, contact };
  });

  let status: 'sent' | 'failed' = 'sent';
  let providerMessageId: string | null = null;
  try {
    ({ providerMessageId } = await deps.provider.send({ to: queued.message.to_address, from: deps.from, body: queued.message.body }));
  } catch (err) {
    status = 'failed';
    deps.log.warn({ err, messageId: queued.message.id }, 'sms provider refused the message');
  }

  return db.transaction(async (tx) => {
    const [row] = await tx.run(q.SET_MESSAGE_STATUS, { id: queued.message.id, status, providerMessageId });
    const view = toMessageView(row!);
    if (status === 'sent') {
      const at = deps.clock.now();
      await emitEvents(tx, [
        {
          orgId: actor.orgId,
          event: 'message.sent',
          source: actor.eventSource ?? 'app',
          data: { message: view, contact: contactData(queued.contact) },
          at,
        },
      ]);
    }
    return view;
  });
}

/**
 * An inbound text from the provider, for the organization the receiving number belongs to. Stored once per
 * providerMessageId, however often the provider re-delivers it; a sender no live contact has is acknowledged and
 * dropped, so the provider stops retrying.
 */
export async function receiveSms(db: Db, input: InboundSmsInput, now: Date): Promise<InboundSmsOutput> {
  return db.transaction(async (tx) => {
    const [org] = await tx.run(q.ORG_EXISTS, { id: input.orgId });
    if (!org) throw errors.notFound(`No organization with id ${input.orgId}`);
    const digits = phoneDigits(input.from);
    const [contact] = digits ? await tx.run(q.CONTACT_BY_PHONE, { orgId: input.orgId, digits }) : [];
    if (!contact) return { status: 'no_matching_contact', messageId: null, conversationId: null };

    await tx.run(q.LOCK_PROVIDER_MESSAGE, { key: `sms-inbound:${input.orgId}:${input.providerMessageId}` });
    const [seen] = await tx.run(q.FIND_INBOUND_BY_PROVIDER_ID, { contactId: contact.id, providerMessageId: input.providerMessageId });
    if (seen) return { status: 'duplicate', messageId: seen.id, conversationId: seen.conversation_id };

    const conversation = await openConversation(tx, input.orgId, contact.id, now);
    const [row] = await tx.run(q.INSERT_MESSAGE, {
      id: randomUUID(),
      orgId: input.orgId,
      conversationId: conversation.id,
      contactId: contact.id,
      direction: 'inbound',
      from: input.from,
      to: input.to,
      body: input.body,
      status: 'received',
      providerMessageId: input.providerMessageId,
      now,
    });
    const view = toMessageView(row!);
    await emitEvents(tx, [
      ...(conversation.created ? [conversationCreated(input.orgId, 'inbound', conversation.id, contact, now)] : []),
      { orgId: input.orgId, event: 'message.received', source: 'inbound', data: { message: view, contact: contactData(contact) }, at: now },
    ]);
    return { status: 'stored', messageId: view.id, conversationId: conversation.id };
  });
}

/** The latest messages with a contact, oldest first. */
export async function listMessages(db: Db, actor: InternalActor, input: ListMessagesInput) {
  const [contact] = await db.run(q.LIVE_CONTACT, { id: input.id, orgId: actor.orgId });
  if (!contact) throw errors.notFound(`No contact with id ${input.id}`);
  const [conversation] = await db.run(q.CONVERSATION_OF_CONTACT, { contactId: input.id, orgId: actor.orgId });
  if (!conversation) return { conversationId: null, messages: [] };
  const rows = await db.run(q.LATEST_MESSAGES, { conversationId: conversation.id, limit: input.limit });
  return { conversationId: conversation.id, messages: rows.map(toMessageView) };
}
