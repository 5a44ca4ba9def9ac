import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './base.ts';
import { Organization } from './organization.ts';
import { User } from './user.ts';

/**
 * A workflow with the 'Webhook received' trigger: a JSON POST to its intake URL records a run on a contact and runs
 * its steps (automation actions) as a job. The URL's token is a credential: only its sha256 is stored, like API keys.
 */
export const WorkflowSchema = defineEntity({
  name: 'Workflow',
  tableName: 'workflows',
  indexes: [{ name: 'workflows_org_created_idx', properties: ['organization', 'createdAt'] }],
  properties: {
    ...timestamps,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    name: p.text(),
    trigger: p.enum(['webhook_received'] as const).default('webhook_received'),
    /** `[{ action, input }]`, validated by the workflows service with the automation actions' own schemas. */
    steps: p.json<unknown[]>().default('[]'),
    enabled: p.boolean().default(true),
    /** sha256 (hex) of the intake token; the token itself is shown at creation and rotation only. */
    tokenHash: p.text().unique('workflows_token_hash_unique'),
    /** The token's first characters, so a screen can tell which URL is current without holding it. */
    tokenPrefix: p.text(),
    createdBy: () => p.manyToOne(User).nullable().deleteRule('set null'),
  },
});
export class Workflow extends WorkflowSchema.class {}
WorkflowSchema.setClass(Workflow);
