import { z } from 'zod';
import { IsoDateTime, int, INT4_MAX, text } from '../validation/index.ts';

/** More stages than this is a board nobody can read; the cap also bounds the reorder payload. */
export const MAX_STAGES = 50;

const PipelineName = text(100).min(1, 'name must not be empty').meta({ example: 'Sales' });
const StageName = text(100).min(1, 'stage name must not be empty').meta({ example: 'Qualified' });
const PipelineId = z.uuid({ message: 'id must be a pipeline id (UUID)' });
const StageId = z.uuid({ message: 'stageId must be a stage id (UUID)' });

export const StageView = z.object({
  id: z.uuid(),
  name: z.string(),
  position: z.number().int().meta({ description: '0 is the first stage; positions are always 0..n-1.' }),
});
export type StageView = z.infer<typeof StageView>;

export const PipelineView = z.object({
  id: z.uuid(),
  name: z.string(),
  isDefault: z.boolean().meta({ description: 'The pipeline leads land on when none is named; one per organization.' }),
  createdAt: IsoDateTime,
  stages: z.array(StageView).meta({ description: 'In board order.' }),
});
export type PipelineView = z.infer<typeof PipelineView>;

export const PipelineList = z.object({ items: z.array(PipelineView) });

export const PipelineIdInput = z.object({ id: PipelineId });

export const PipelineCreateInput = z.object({
  name: PipelineName.meta({ description: 'Unique in the organization, case-insensitively.' }),
  stages: z
    .array(StageName)
    .max(MAX_STAGES)
    .optional()
    .meta({ description: 'Stage names in board order; none by default.', example: ['New', 'Qualified', 'Won'] }),
  // A one-member union: the REST adapter coerces plain booleans (null and "no" would become false and true).
  isDefault: z
    .union([z.boolean()])
    .optional()
    .meta({ description: 'Make it the default pipeline. The first pipeline of an organization is the default anyway.' }),
});
export type PipelineCreateInput = z.infer<typeof PipelineCreateInput>;

export const PipelineRenameInput = z.object({ id: PipelineId, name: PipelineName });

export const StageAddInput = z.object({
  id: PipelineId,
  name: StageName,
  position: z
    .union([int({ min: 0, max: INT4_MAX, message: 'position must be a whole number, 0 or more' })])
    .optional()
    .meta({ description: 'Where the stage goes (0 = first); past the end or omitted means last.' }),
});
export type StageAddInput = z.infer<typeof StageAddInput>;

export const StageRenameInput = z.object({ id: PipelineId, stageId: StageId, name: StageName });

export const StageRemoveInput = z.object({ id: PipelineId, stageId: StageId });

export const StageReorderInput = z.object({
  id: PipelineId,
  stageIds: z.array(StageId).min(1).max(MAX_STAGES).meta({ description: 'Every stage of the pipeline exactly once, in the new order.' }),
});

export const DeletedOutput = z.object({ id: z.uuid(), deleted: z.literal(true) });
