import { z } from 'zod';
import { defineEvent, EX, EXAMPLE_TIMESTAMP } from '../payload.ts';
import { AiActionView, VerificationView } from '../records.ts';

/** The text of every `ping` (a test delivery from the endpoint screen). */
export const PING_MESSAGE = 'This is a test event from Leadwire.';

const EXAMPLE_AI_ACTION: z.input<typeof AiActionView> = {
  id: EX.aiAction,
  contactId: EX.contact,
  kind: 'follow_up',
  summary: 'Ada opened the proposal twice: suggest a call this week.',
  payload: { channel: 'call' },
  status: 'pending',
  decidedBy: null,
  decidedAt: null,
  reason: null,
  createdAt: '2026-11-22T08:00:00.000Z',
};
const decided = (status: 'approved' | 'rejected', reason: string | null) => ({
  ...EXAMPLE_AI_ACTION,
  status,
  decidedBy: EX.user,
  decidedAt: EXAMPLE_TIMESTAMP,
  reason,
});

const EXAMPLE_VERIFICATION: z.input<typeof VerificationView> = {
  id: EX.verification,
  status: 'verified',
  registrationNumber: 'CH-1187023',
  evidence: { registry: 'Charity Commission' },
  recordedBy: EX.user,
  createdAt: EXAMPLE_TIMESTAMP,
};

export const workspaceEvents = [
  defineEvent({
    name: 'ai_action.created',
    label: 'AI action suggested',
    description: 'The AI suggested an action on a contact; it waits for a user to approve or reject it.',
    data: z.object({ aiAction: AiActionView }),
    source: 'ai',
    exampleData: { aiAction: EXAMPLE_AI_ACTION },
  }),
  defineEvent({
    name: 'ai_action.approved',
    label: 'AI action approved',
    description: 'A user approved an AI action (`aiAction.decidedBy`); carrying it out is up to whoever listens.',
    data: z.object({ aiAction: AiActionView }),
    source: 'app',
    exampleData: { aiAction: decided('approved', null) },
  }),
  defineEvent({
    name: 'ai_action.rejected',
    label: 'AI action rejected',
    description: 'A user rejected an AI action, with a reason when they gave one.',
    data: z.object({ aiAction: AiActionView }),
    source: 'app',
    exampleData: { aiAction: decided('rejected', 'Already spoke to her today.') },
  }),
  defineEvent({
    name: 'nonprofit.verification_recorded',
    label: 'Nonprofit verification recorded',
    description: "An owner or admin recorded the outcome of the workspace's nonprofit verification.",
    data: z.object({ verification: VerificationView }),
    source: 'app',
    exampleData: { verification: EXAMPLE_VERIFICATION },
  }),
  defineEvent({
    name: 'nonprofit.activated',
    label: 'Nonprofit plan activated',
    description: 'The first verified verification activated the nonprofit plan (once per workspace).',
    data: z.object({
      organization: z.object({ id: z.uuid(), nonprofitActivatedAt: z.iso.datetime() }),
      verification: VerificationView,
    }),
    source: 'app',
    exampleData: { organization: { id: EX.org, nonprofitActivatedAt: EXAMPLE_TIMESTAMP }, verification: EXAMPLE_VERIFICATION },
  }),
  defineEvent({
    name: 'ping',
    label: 'Test event',
    description: 'Sent by "Send test" on an endpoint (POST /api/webhooks/{id}/test), even to a disabled endpoint. It has no `source`.',
    data: z.object({ message: z.string() }),
    source: null,
    exampleData: { message: PING_MESSAGE },
  }),
] as const;
