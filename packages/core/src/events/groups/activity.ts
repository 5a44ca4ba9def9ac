import { z } from 'zod';
import { defineEvent, EventContactRef, EX, EXAMPLE_CONTACT_REF, EXAMPLE_TIMESTAMP } from '../payload.ts';
import { BookingView, MessageView, TaskView } from '../records.ts';

const contact = EventContactRef;

const message = (direction: 'inbound' | 'outbound') => ({
  id: EX.message,
  conversationId: EX.conversation,
  contactId: EX.contact,
  direction,
  channel: 'sms',
  from: direction === 'outbound' ? '+15005550006' : '+442079460018',
  to: direction === 'outbound' ? '+442079460018' : '+15005550006',
  body: direction === 'outbound' ? 'Hi Ada, your demo is confirmed for Tuesday.' : 'Thanks, see you then!',
  status: direction === 'outbound' ? ('sent' as const) : ('received' as const),
  providerMessageId: 'SM7f3c2a9e41d8',
  createdAt: EXAMPLE_TIMESTAMP,
});

const EXAMPLE_TASK: z.input<typeof TaskView> = {
  id: EX.task,
  title: 'Send the proposal',
  dueAt: '2026-11-25T09:00:00.000Z',
  assigneeId: EX.user,
  contactId: EX.contact,
  completedAt: null,
  createdAt: EXAMPLE_TIMESTAMP,
  updatedAt: EXAMPLE_TIMESTAMP,
};

const EXAMPLE_BOOKING: z.input<typeof BookingView> = {
  id: EX.booking,
  contactId: EX.contact,
  title: 'Product demo',
  startsAt: '2026-11-24T15:00:00.000Z',
  endsAt: '2026-11-24T15:30:00.000Z',
  status: 'confirmed',
  cancelledAt: null,
  createdAt: EXAMPLE_TIMESTAMP,
};

export const activityEvents = [
  defineEvent({
    name: 'message.sent',
    label: 'Message sent',
    description: 'A text to a contact was accepted by the SMS provider (a text the provider refused sends no event).',
    data: z.object({ message: MessageView, contact }),
    source: 'app',
    exampleData: { message: message('outbound'), contact: EXAMPLE_CONTACT_REF },
  }),
  defineEvent({
    name: 'message.received',
    label: 'Message received',
    description: 'A contact texted in (source `inbound`). Texts from numbers no live contact has are not recorded.',
    data: z.object({ message: MessageView, contact }),
    source: 'inbound',
    exampleData: { message: message('inbound'), contact: EXAMPLE_CONTACT_REF },
  }),
  defineEvent({
    name: 'conversation.created',
    label: 'Conversation started',
    description: 'The first message with a contact opened their conversation (before message.sent or message.received).',
    data: z.object({
      conversation: z.object({ id: z.uuid(), contactId: z.uuid(), channel: z.string() }),
      contact,
    }),
    source: 'inbound',
    exampleData: { conversation: { id: EX.conversation, contactId: EX.contact, channel: 'sms' }, contact: EXAMPLE_CONTACT_REF },
  }),
  defineEvent({
    name: 'task.created',
    label: 'Task created',
    description: 'A task was created, for a contact or on its own (`contactId` null).',
    data: z.object({ task: TaskView }),
    source: 'app',
    exampleData: { task: EXAMPLE_TASK },
  }),
  defineEvent({
    name: 'task.completed',
    label: 'Task completed',
    description: 'A task was completed (once: completing it again sends nothing).',
    data: z.object({ task: TaskView }),
    source: 'app',
    exampleData: { task: { ...EXAMPLE_TASK, completedAt: EXAMPLE_TIMESTAMP } },
  }),
  defineEvent({
    name: 'booking.created',
    label: 'Booking created',
    description: "A meeting with a contact was booked. The contact's score may move with it (contact.score_changed).",
    data: z.object({ booking: BookingView }),
    source: 'app',
    exampleData: { booking: EXAMPLE_BOOKING },
  }),
  defineEvent({
    name: 'booking.cancelled',
    label: 'Booking cancelled',
    description: 'A confirmed booking was cancelled (once).',
    data: z.object({ booking: BookingView }),
    source: 'app',
    exampleData: { booking: { ...EXAMPLE_BOOKING, status: 'cancelled', cancelledAt: EXAMPLE_TIMESTAMP } },
  }),
] as const;
