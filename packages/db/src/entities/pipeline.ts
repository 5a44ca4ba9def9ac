import { defineEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.ts';
import { Contact } from './contact.ts';
import { Organization } from './organization.ts';

export const PipelineSchema = defineEntity({
  name: 'Pipeline',
  tableName: 'pipelines',
  uniques: [
    {
      name: 'pipelines_org_name_unique',
      expression: 'create unique index "pipelines_org_name_unique" on "pipelines" ("organization_id", lower("name"))',
    },
    {
      name: 'pipelines_one_default',
      expression: 'create unique index "pipelines_one_default" on "pipelines" ("organization_id") where "is_default"',
    },
  ],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    name: p.text(),
    isDefault: p.boolean().default(false),
  },
});
export class Pipeline extends PipelineSchema.class {}
PipelineSchema.setClass(Pipeline);

export const PipelineStageSchema = defineEntity({
  name: 'PipelineStage',
  tableName: 'pipeline_stages',
  uniques: [{ name: 'pipeline_stages_position_unique', properties: ['pipeline', 'position'] }],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    pipeline: () => p.manyToOne(Pipeline).deleteRule('cascade'),
    name: p.text(),
    /** Order within the pipeline; the lowest is the first stage. */
    position: p.integer(),
  },
});
export class PipelineStage extends PipelineStageSchema.class {}
PipelineStageSchema.setClass(PipelineStage);

export const PipelineItemSchema = defineEntity({
  name: 'PipelineItem',
  tableName: 'pipeline_items',
  // One placement per contact and pipeline: "a contact already on that pipeline is skipped" holds under concurrency.
  uniques: [{ name: 'pipeline_items_pipeline_contact_unique', properties: ['pipeline', 'contact'] }],
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    pipeline: () => p.manyToOne(Pipeline).deleteRule('cascade'),
    stage: () => p.manyToOne(PipelineStage).deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).deleteRule('cascade').index(),
  },
});
export class PipelineItem extends PipelineItemSchema.class {}
PipelineItemSchema.setClass(PipelineItem);
