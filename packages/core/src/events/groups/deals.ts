import { z } from 'zod';
import { defineEvent, EX, EXAMPLE_TIMESTAMP } from '../payload.ts';
import { DealView } from '../records.ts';

const deal = DealView.meta({ description: 'The deal after the change.' });
const StageRef = z.object({ id: z.uuid(), name: z.string(), pipelineId: z.uuid() });

const EXAMPLE_DEAL: z.input<typeof DealView> = {
  id: EX.deal,
  contactId: EX.contact,
  pipelineId: EX.pipeline,
  stageId: EX.stage2,
  title: 'Annual plan, 25 seats',
  valueCents: 1250000,
  currency: 'EUR',
  status: 'open',
  closedAt: null,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: EXAMPLE_TIMESTAMP,
};
const closed = (status: 'won' | 'lost') => ({ ...EXAMPLE_DEAL, status, closedAt: EXAMPLE_TIMESTAMP });

export const dealEvents = [
  defineEvent({
    name: 'deal.created',
    label: 'Deal created',
    description: "A deal was opened for a contact, on a pipeline's stage.",
    data: z.object({ deal }),
    source: 'app',
    exampleData: { deal: EXAMPLE_DEAL },
  }),
  defineEvent({
    name: 'deal.updated',
    label: 'Deal updated',
    description:
      "A deal's title, value or currency changed, or it was reopened; `changed` names the fields (`title`, `valueCents`, `currency`, `status`). A stage move or a close has its own event.",
    data: z.object({ deal, changed: z.array(z.enum(['title', 'valueCents', 'currency', 'status'])).min(1) }),
    source: 'app',
    exampleData: { deal: EXAMPLE_DEAL, changed: ['valueCents'] },
  }),
  defineEvent({
    name: 'deal.won',
    label: 'Deal won',
    description: 'A deal was closed as won; `deal.closedAt` is when.',
    data: z.object({ deal }),
    source: 'app',
    exampleData: { deal: closed('won') },
  }),
  defineEvent({
    name: 'deal.lost',
    label: 'Deal lost',
    description: 'A deal was closed as lost; `deal.closedAt` is when.',
    data: z.object({ deal }),
    source: 'app',
    exampleData: { deal: closed('lost') },
  }),
  defineEvent({
    name: 'deal.stage_changed',
    label: 'Deal stage changed',
    description: 'A deal moved to another stage, possibly of another pipeline: `fromStage` to `toStage` (id, name, pipelineId).',
    data: z.object({
      deal,
      fromStage: StageRef.optional().meta({ description: 'Absent when the stage it left no longer exists.' }),
      toStage: StageRef,
    }),
    source: 'app',
    exampleData: {
      deal: EXAMPLE_DEAL,
      fromStage: { id: EX.stage1, name: 'Qualified', pipelineId: EX.pipeline },
      toStage: { id: EX.stage2, name: 'Proposal', pipelineId: EX.pipeline },
    },
  }),
] as const;
