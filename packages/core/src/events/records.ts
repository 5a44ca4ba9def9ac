import { z } from 'zod';
import { IsoDateTime } from '../validation/index.ts';

/*
 * The wire shape of each record an event carries. The API answers with the same views (each resource's schemas.ts
 * re-exports its own), so `data.deal` of a webhook and `GET /deals/{id}` cannot drift apart. They live here, below the
 * resources, because the event catalogue needs them and every resource writes events: imports point one way.
 */

export const DEAL_STATUSES = ['open', 'won', 'lost'] as const;

export const DealView = z.object({
  id: z.uuid(),
  contactId: z.uuid(),
  pipelineId: z.uuid(),
  stageId: z.uuid(),
  title: z.string(),
  valueCents: z.number().int().nullable(),
  currency: z.string(),
  status: z.enum(DEAL_STATUSES),
  closedAt: IsoDateTime.nullable().meta({ description: 'When the deal was won or lost; null while open.' }),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});
export type DealView = z.infer<typeof DealView>;

export const TaskView = z.object({
  id: z.uuid(),
  title: z.string(),
  dueAt: IsoDateTime.nullable(),
  assigneeId: z.uuid().nullable().meta({ description: 'A user of the organization; null when unassigned.' }),
  contactId: z.uuid().nullable(),
  completedAt: IsoDateTime.nullable().meta({ description: 'Set once, by the first completion.' }),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});
export type TaskView = z.infer<typeof TaskView>;

export const BOOKING_STATUSES = ['confirmed', 'cancelled'] as const;

export const BookingView = z.object({
  id: z.uuid(),
  contactId: z.uuid(),
  title: z.string().nullable(),
  startsAt: IsoDateTime,
  endsAt: IsoDateTime,
  status: z.enum(BOOKING_STATUSES),
  cancelledAt: IsoDateTime.nullable(),
  createdAt: IsoDateTime,
});
export type BookingView = z.infer<typeof BookingView>;

export const AI_ACTION_STATUSES = ['pending', 'approved', 'rejected'] as const;

export const AiActionView = z.object({
  id: z.uuid(),
  contactId: z.uuid(),
  kind: z.string(),
  summary: z.string(),
  payload: z.record(z.string(), z.unknown()),
  status: z.enum(AI_ACTION_STATUSES),
  decidedBy: z.uuid().nullable().meta({ description: 'The user who approved or rejected it.' }),
  decidedAt: IsoDateTime.nullable(),
  reason: z.string().nullable().meta({ description: 'Why it was rejected, when the user said.' }),
  createdAt: IsoDateTime,
});
export type AiActionView = z.infer<typeof AiActionView>;

export const VerificationView = z.object({
  id: z.uuid(),
  status: z.enum(['verified', 'rejected']),
  registrationNumber: z.string().nullable(),
  evidence: z.record(z.string(), z.unknown()),
  recordedBy: z.uuid().nullable(),
  createdAt: IsoDateTime,
});
export type VerificationView = z.infer<typeof VerificationView>;

export const MessageView = z.object({
  id: z.uuid(),
  conversationId: z.uuid(),
  contactId: z.uuid(),
  direction: z.enum(['inbound', 'outbound']),
  channel: z.string(),
  from: z.string(),
  to: z.string(),
  body: z.string(),
  status: z
    .enum(['queued', 'sent', 'failed', 'received'])
    .meta({ description: '`failed` when the provider did not accept the text; nothing is retried automatically.' }),
  providerMessageId: z.string().nullable(),
  createdAt: z.iso.datetime(),
});
export type MessageView = z.infer<typeof MessageView>;

export const ContactView = z.object({
  id: z.uuid(),
  email: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  phone: z.string().nullable(),
  jobTitle: z.string().nullable(),
  tags: z.array(z.string()),
  leadScore: z.number().int().min(0).max(100),
  stage: z.string(),
});
export type ContactView = z.infer<typeof ContactView>;
