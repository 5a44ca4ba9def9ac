export * from './organization.ts';
export * from './user.ts';
export * from './api-key.ts';
export * from './company.ts';
export * from './contact.ts';
export * from './note.ts';
export * from './pipeline.ts';
export * from './outbox-event.ts';
export * from './idempotency-record.ts';
export * from './rate-limit-counter.ts';
export * from './session.ts';
export * from './crm.ts';
export * from './webhook.ts';
export * from './form.ts';
export * from './tracking.ts';
export * from './workflow.ts';
export * from './listen.ts';
export * from './activity.ts';
export * from './consent.ts';

import { ApiKeySchema } from './api-key.ts';
import { CompanySchema } from './company.ts';
import { ContactSchema } from './contact.ts';
import { IdempotencyRecordSchema } from './idempotency-record.ts';
import { NoteSchema } from './note.ts';
import { ContactCounterSchema, OrganizationSchema } from './organization.ts';
import { OutboxEventSchema, OutboxPendingSchema } from './outbox-event.ts';
import { PipelineItemSchema, PipelineSchema, PipelineStageSchema } from './pipeline.ts';
import { RateLimitCounterSchema } from './rate-limit-counter.ts';
import { UserSchema } from './user.ts';
import { InviteSchema, PasswordResetTokenSchema, SessionSchema, SignInAttemptSchema } from './session.ts';
import {
  AiActionSchema,
  BookingSchema,
  ContactFileSchema,
  ConversationSchema,
  DealSchema,
  MessageSchema,
  NonprofitVerificationSchema,
  TaskSchema,
  WorkflowRunSchema,
} from './crm.ts';
import { WebhookAttemptSchema, WebhookDeliverySchema, WebhookEndpointSchema } from './webhook.ts';
import { FormSchema, FormSubmissionSchema } from './form.ts';
import { PageViewSchema, TrackedLinkSchema, TrackingEventSchema, TrackingVisitorSchema } from './tracking.ts';
import { WorkflowSchema } from './workflow.ts';
import { WebhookListenerSchema, WebhookListenSecretSchema } from './listen.ts';
import { ActivityHourlySchema } from './activity.ts';
import { ConsentEntrySchema, ConsentKeySchema } from './consent.ts';

export const allEntities = [
  OrganizationSchema,
  ContactCounterSchema,
  UserSchema,
  ApiKeySchema,
  CompanySchema,
  ContactSchema,
  NoteSchema,
  PipelineSchema,
  PipelineStageSchema,
  PipelineItemSchema,
  OutboxEventSchema,
  OutboxPendingSchema,
  IdempotencyRecordSchema,
  RateLimitCounterSchema,
  SessionSchema,
  PasswordResetTokenSchema,
  InviteSchema,
  SignInAttemptSchema,
  DealSchema,
  TaskSchema,
  ConversationSchema,
  MessageSchema,
  BookingSchema,
  AiActionSchema,
  WorkflowRunSchema,
  NonprofitVerificationSchema,
  ContactFileSchema,
  WebhookEndpointSchema,
  WebhookDeliverySchema,
  WebhookAttemptSchema,
  FormSchema,
  FormSubmissionSchema,
  PageViewSchema,
  TrackingEventSchema,
  ConsentEntrySchema,
  ConsentKeySchema,
  TrackingVisitorSchema,
  TrackedLinkSchema,
  WorkflowSchema,
  WebhookListenSecretSchema,
  WebhookListenerSchema,
  ActivityHourlySchema,
];
