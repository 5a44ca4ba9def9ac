import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamps } from './base.ts';
import { Contact } from './contact.ts';
import { Organization } from './organization.ts';
import { Pipeline, PipelineStage } from './pipeline.ts';
import { User } from './user.ts';
import { Workflow } from './workflow.ts';

export const DealSchema = defineEntity({
  name: 'Deal',
  tableName: 'deals',
  properties: {
    ...timestamps,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).deleteRule('cascade').index(),
    pipeline: () => p.manyToOne(Pipeline).deleteRule('cascade'),
    stage: () => p.manyToOne(PipelineStage).deleteRule('cascade'),
    title: p.text(),
    /** Amount in minor units (cents), so sums are exact. */
    valueCents: p.bigint('number').nullable(),
    currency: p.text().default('USD'),
    status: p.enum(['open', 'won', 'lost'] as const).default('open'),
    closedAt: p.datetime().nullable(),
  },
});
export class Deal extends DealSchema.class {}
DealSchema.setClass(Deal);

export const TaskSchema = defineEntity({
  name: 'Task',
  tableName: 'tasks',
  properties: {
    ...timestamps,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).nullable().deleteRule('cascade').index(),
    assignee: () => p.manyToOne(User).nullable().deleteRule('set null'),
    title: p.text(),
    dueAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
  },
});
export class Task extends TaskSchema.class {}
TaskSchema.setClass(Task);

export const ConversationSchema = defineEntity({
  name: 'Conversation',
  tableName: 'conversations',
  uniques: [{ name: 'conversations_contact_channel_unique', properties: ['contact', 'channel'] }],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).deleteRule('cascade'),
    channel: p.text().default('sms'),
    lastMessageAt: p.datetime().nullable(),
  },
});
export class Conversation extends ConversationSchema.class {}
ConversationSchema.setClass(Conversation);

export const MessageSchema = defineEntity({
  name: 'Message',
  tableName: 'messages',
  // A provider retrying an inbound webhook must not store the message twice.
  uniques: [
    {
      name: 'messages_inbound_provider_id_unique',
      expression: `create unique index "messages_inbound_provider_id_unique" on "messages" ("organization_id", "provider_message_id") where "direction" = 'inbound' and "provider_message_id" is not null`,
    },
  ],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    conversation: () => p.manyToOne(Conversation).deleteRule('cascade').index(),
    contact: () => p.manyToOne(Contact).deleteRule('cascade').index(),
    direction: p.enum(['inbound', 'outbound'] as const),
    channel: p.text().default('sms'),
    fromAddress: p.text(),
    toAddress: p.text(),
    body: p.text(),
    status: p.enum(['queued', 'sent', 'failed', 'received'] as const),
    providerMessageId: p.text().nullable(),
  },
});
export class Message extends MessageSchema.class {}
MessageSchema.setClass(Message);

export const BookingSchema = defineEntity({
  name: 'Booking',
  tableName: 'bookings',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).deleteRule('cascade').index(),
    title: p.text().nullable(),
    startsAt: p.datetime(),
    endsAt: p.datetime(),
    status: p.enum(['confirmed', 'cancelled'] as const).default('confirmed'),
    cancelledAt: p.datetime().nullable(),
  },
});
export class Booking extends BookingSchema.class {}
BookingSchema.setClass(Booking);

export const AiActionSchema = defineEntity({
  name: 'AiAction',
  tableName: 'ai_actions',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).deleteRule('cascade').index(),
    kind: p.text(),
    summary: p.text(),
    payload: p.json<Record<string, unknown>>().default('{}'),
    status: p.enum(['pending', 'approved', 'rejected'] as const).default('pending'),
    decidedBy: () => p.manyToOne(User).nullable().deleteRule('set null'),
    decidedAt: p.datetime().nullable(),
    reason: p.text().nullable(),
  },
});
export class AiAction extends AiActionSchema.class {}
AiActionSchema.setClass(AiAction);

export const WorkflowRunSchema = defineEntity({
  name: 'WorkflowRun',
  tableName: 'workflow_runs',
  indexes: [
    // Retention's look-up by age (Migration20261126110000): a range summary, no B-tree entry per insert.
    {
      name: 'workflow_runs_created_brin',
      expression: `create index "workflow_runs_created_brin" on "workflow_runs" using brin ("created_at") with (autosummarize = on)`,
    },
  ],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).nullable().deleteRule('cascade').index(),
    /** The workflow's name when the run was recorded: runs outlive their workflow. */
    workflow: p.text(),
    status: p.text().default('running'),
    /** Null once the workflow is deleted; the run stays on its contact's timeline. */
    definition: () => p.manyToOne(Workflow).fieldName('workflow_id').nullable().deleteRule('set null').index(),
    /** The steps as they were when the run was recorded, each with its outcome once it ran. */
    steps: p.json<unknown[]>().default('[]'),
    /** The JSON body that triggered the run. */
    payload: p.json<Record<string, unknown>>().default('{}'),
    finishedAt: p.datetime().nullable(),
  },
});
export class WorkflowRun extends WorkflowRunSchema.class {}
WorkflowRunSchema.setClass(WorkflowRun);

export const NonprofitVerificationSchema = defineEntity({
  name: 'NonprofitVerification',
  tableName: 'nonprofit_verifications',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    recordedBy: () => p.manyToOne(User).nullable().deleteRule('set null'),
    status: p.enum(['verified', 'rejected'] as const),
    registrationNumber: p.text().nullable(),
    evidence: p.json<Record<string, unknown>>().default('{}'),
  },
});
export class NonprofitVerification extends NonprofitVerificationSchema.class {}
NonprofitVerificationSchema.setClass(NonprofitVerification);

export const ContactFileSchema = defineEntity({
  name: 'ContactFile',
  tableName: 'contact_files',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).deleteRule('cascade').index(),
    uploadedBy: () => p.manyToOne(User).nullable().deleteRule('set null'),
    kind: p.enum(['photo', 'file'] as const),
    filename: p.text(),
    contentType: p.text(),
    size: p.integer(),
    sha256: p.text(),
    /** Where the storage backend keeps the bytes; never a path a client chose. */
    storageKey: p.text(),
  },
});
export class ContactFile extends ContactFileSchema.class {}
ContactFileSchema.setClass(ContactFile);
